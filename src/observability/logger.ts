/** pino in its default mode: JSON to stdout, synchronous, no transports (node-perf-style note 1.5). */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'svc'): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid },
    // keys and secrets never reach the log, wherever they appear in a logged object
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.privateKey', '*.private_key', '*.pem', 'key', '*.key.d'], censor: '[redacted]' },
  });
}
