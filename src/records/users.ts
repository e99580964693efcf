// Any thread. The durable shape of a user (users/users.ts).

export interface UserRecord {
  userId: string;
  wallet: string;
  tier: number;
  createdAtMs: number;
}
