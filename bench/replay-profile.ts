/** Structural replay of a file ledger in this process, for profiling: node --cpu-prof --import tsx bench/replay-profile.ts DIR */
import { FileStore } from '../src/ledger/store/file-store.js';
import { Ledger } from '../src/ledger/ledger.js';

const dir = process.argv[2] ?? '/tmp/replay100k';
const store = FileStore.open({ dataDir: dir, retryAfterS: 1 });
const ledger = new Ledger(10_000_000);
const cpu0 = process.cpuUsage();
const r = await store.replay({ apply: (n) => ledger.applyNode(n, false, true), verifySignatures: () => Promise.resolve(null) });
const cpu = process.cpuUsage(cpu0);
console.log(`structural replay: ${r.nodes} nodes, ${Math.round(r.ms)} ms wall, ${Math.round((cpu.user + cpu.system) / 1000)} ms CPU`);
await store.close();
