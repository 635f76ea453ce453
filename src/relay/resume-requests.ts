type Message = Record<string, unknown>;

/** A request that reopens one of the client's streams on a new link, and the gateway's answer to it. */
export interface ResumeRequest {
  method: string;
  params: Record<string, unknown>;
}

/**
 * How many resume requests are in flight on a new link at first: under the gateway's default limit
 * of requests in flight per connection (64), which refuses the rest as overloaded.
 */
const RESUMES_AT_ONCE = 16;
/** How many times one resume is sent while the gateway keeps refusing it as overloaded. */
const RESUME_ATTEMPTS = 20;

/**
 * Sends every resume, however many streams the client follows, and resolves with each answer in
 * the replays' order. A gateway whose limit of requests in flight is lower than the relay's pace
 * refuses some as overloaded: each such one is sent again later, and the pace drops by one request
 * at a time (down to one in flight, which any gateway accepts), so no stream is left unresumed for
 * having come late.
 */
export async function sendResumes(
  replays: readonly ResumeRequest[],
  send: (request: ResumeRequest) => Promise<Message>,
  overloaded: (answer: Message) => boolean,
): Promise<Array<ResumeRequest & { answer: Message }>> {
  const queue = replays.map((request, index) => ({ request, index, attempts: 0 }));
  const answered = new Array<ResumeRequest & { answer: Message }>(replays.length);
  let active = 0;
  const worker = async () => {
    active++;
    try {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const answer = await send(job.request);
        if (overloaded(answer) && ++job.attempts < RESUME_ATTEMPTS) {
          queue.push(job);
          if (active > 1) return;
          continue;
        }
        answered[job.index] = { ...job.request, answer };
      }
    } finally {
      active--;
    }
  };
  await Promise.all(Array.from({ length: Math.min(RESUMES_AT_ONCE, queue.length) }, worker));
  return answered;
}
