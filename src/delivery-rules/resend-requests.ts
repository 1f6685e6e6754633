/**
 * The one rule of resend, in the words the admin API's description and the docs use (test/delivery-rules/
 * delivery-resend-requests.test.ts holds them to these words): double clicks, two operators and retried calls make one
 * attempt, and a request never waits for more than the attempt under way.
 */
export const RESEND_RULE =
  'A resend is answered by the first attempt that starts after the service accepted it, unless the event is delivered ' +
  'first; an attempt that started for an earlier resend and is still under way when it is accepted answers it as well.';

/** An operator's "resend now": it says how many attempts were recorded when it was asked for. */
export interface ResendRequest {
  seenAttempts: number;
}

/**
 * The resend requests a delivery workflow has received and not yet answered, by RESEND_RULE. The count a request
 * carries was read when the service accepted it (its event row held until Temporal had the request, so no attempt is
 * recorded in between): a request that saw fewer attempts than the number of the last attempt that answered a request
 * was accepted while that attempt was under way, and is answered by it. Any other request is answered by the next
 * attempt that starts, scheduled or manual.
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
