// The admin storage route's shapes: the store's room, and raising its limit at run time.
import { Type } from '@sinclair/typebox';
import { StrictObject } from './common.js';

export const StorageStatus = Type.Object(
  {
    map_size_mb: Type.Number({ description: 'the limit new work may use 7/8 of (PARLAYD_LMDB_MAP_SIZE_MB, or its last raise)' }),
    used_bytes: Type.Integer({ description: "the environment's high-water mark: its data file never shrinks below it" }),
    room_bytes: Type.Integer({ description: 'past this, new work is refused 503; the rest is kept for work already accepted' }),
    disk_free_bytes: Type.Union([Type.Integer(), Type.Null()], {
      description: "free bytes of the data directory's filesystem (null: unknown)",
    }),
    disk_reserve_bytes: Type.Integer({ description: 'below this much free disk, new work is refused 503' }),
    is_refusing: Type.Boolean({ description: 'new work is refused now for want of room' }),
  },
  { $id: 'StorageStatus' },
);

// The config variable's bounds: 1 MiB .. 1 TiB.
export const SetStorage = StrictObject({
  map_size_mb: Type.Integer({
    minimum: 1,
    maximum: 1_048_576,
    description: 'the new limit in MiB; a restart goes back to PARLAYD_LMDB_MAP_SIZE_MB',
  }),
});
