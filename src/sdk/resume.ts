// Maker SDK, in the maker's process. Where the client stands in the server's stream (
// docs/maker-protocol.md section 3.5): every server message after auth_result carries a seq, gapless from 1
// per socket; a repeat is dropped, and a new socket asks for what the lost one was sent after the last seq read.
import type { ServerToMakerMessage } from '../contract/mm.js';
import type { ResumeMessage } from '../contract/mm-stream.js';

export class StreamPosition {
  /** The last seq read on the current socket (0 before any); what a resume names with its session. */
  lastSeq = 0;

  /**
   * False for a repeat (a seq at or below the last one read): drop it. Otherwise the seq is taken off the
   * message: events are the protocol's messages, and `lastSeq` tells where the stream stands.
   */
  accept(message: ServerToMakerMessage): boolean {
    const seq = (message as { seq?: number }).seq;
    if (seq === undefined) return true;
    if (seq <= this.lastSeq) return false;
    this.lastSeq = seq;
    delete (message as { seq?: number }).seq;
    return true;
  }

  /**
   * A new socket authenticated under `newToken`: its own stream starts at 1. Returns the resume to send on it
   * for the previous socket's session, or null when there is none to resume (or resuming is off).
   */
  onAuthenticated(previousToken: string | null, newToken: string, isResumeOn: boolean): ResumeMessage | null {
    const lastSeq = this.lastSeq;
    this.lastSeq = 0;
    if (previousToken === null || !isResumeOn || previousToken === newToken) return null;
    return { type: 'resume', session_token: previousToken, last_seq: lastSeq };
  }
}
