/** pino in its default mode: JSON to stdout, synchronous, no transports, so no line is lost at exit. */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** `destination` is for tests; production writes to stdout through pino's default sonic-boom. */
export function createLogger(level: string, name = 'svc', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: { pid: process.pid },
    // keys and secrets never reach the log, wherever they appear in a logged object
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'privateKey', '*.privateKey', '*.private_key', 'signingKey', '*.signingKey', 'key', '*.key.d'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
