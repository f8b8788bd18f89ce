/**
 * An API server answer's body, read up to a cap: the two raw HTTP clients of
 * src/inputs (single IPAddress GETs, wire-form JSON requests) never hold more
 * than the cap of one answer, whatever the server sends.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { BadAnswerError } from './errors.js';

/** The body as text; past `maxBytes` the request is destroyed and this rejects, saying `what` was too large. */
export function readBoundedBody(
  request: ClientRequest,
  response: IncomingMessage,
  maxBytes: number,
  what: string,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // Destroyed without an error: an answer read whole before this listener came has already
        // handed its socket back to the pool, where an error would have no listener (a crash).
        request.destroy();
        reject(new BadAnswerError('too-large', `${what} larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('error', reject);
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
