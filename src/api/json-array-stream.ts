import { Readable } from 'node:stream';

const CHUNK_BYTES = 16 * 1024;

async function* jsonArrayChunks<T>(rows: AsyncIterable<T>, present: (row: T) => unknown): AsyncGenerator<string> {
  let chunk = '[';
  let first = true;
  for await (const row of rows) {
    chunk += (first ? '' : ',') + JSON.stringify(present(row));
    first = false;
    if (chunk.length >= CHUNK_BYTES) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}]`;
}

/**
 * A JSON array written as the rows arrive. The readable pulls the next rows only when the client has taken the
 * previous chunk, so memory stays flat however many rows there are. The first chunk is read before returning:
 * a failing query then fails the request properly instead of cutting off a 200 that has already begun.
 */
export async function jsonArrayStream<T>(rows: AsyncIterable<T>, present: (row: T) => unknown): Promise<Readable> {
  const chunks = jsonArrayChunks(rows, present);
  let pending: IteratorResult<string> | undefined = await chunks.next();
  return new Readable({
    read() {
      const next = pending ? Promise.resolve(pending) : chunks.next();
      pending = undefined;
      next.then(
        (result) => this.push(result.done ? null : result.value),
        (err: Error) => this.destroy(err),
      );
    },
    // A client that goes away closes the generator, which ends the query and returns its connection to the pool.
    destroy(err, callback) {
      chunks.return(undefined).then(
        () => callback(err),
        (closeErr: Error) => callback(err ?? closeErr),
      );
    },
  });
}
