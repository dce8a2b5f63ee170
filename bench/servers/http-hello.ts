/** Baseline: bare node:http answering {"hello":"world"} (the ceiling any framework is compared to). */
import { createServer } from 'node:http';

const server = createServer((_req, res) => {
  const body = JSON.stringify({ hello: 'world' });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.once('SIGTERM', () => server.close());
