/** An operator's "resend now": it says how many attempts were recorded when it was asked for. */
export interface ResendRequest {
  seenAttempts: number;
}

/**
 * The resend requests a delivery workflow has received and not yet answered. A request is answered by the first
 * attempt that starts after it arrived, scheduled or manual. A request sent before an attempt that answered an
 * earlier one was recorded (a double click, two operators at once, a retried call) is answered by that attempt
 * and needs nothing more. What arrives while an attempt runs is answered by the next one.
 */
export class ResendRequests {
  /** The most attempts any unanswered request had seen; null when none waits. */
  private unansweredSeen: number | null = null;

  /** `answeredBy`: the number of the last attempt that answered a request (0: none yet). */
  constructor(private answeredBy = 0) {}

  receive({ seenAttempts }: ResendRequest): void {
    this.unansweredSeen = Math.max(this.unansweredSeen ?? seenAttempts, seenAttempts);
  }

  /** Whether an attempt is owed to a request. */
  get pending(): boolean {
    return this.unansweredSeen !== null && this.unansweredSeen >= this.answeredBy;
  }

  /** Attempt `number` starts now: it answers every request received so far. */
  attemptStarted(number: number): void {
    if (this.pending) this.answeredBy = number;
    this.unansweredSeen = null;
  }
}
