import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../src/config/load.js';

// V8's parser marks a function literal that is the right-hand side of an assignment to a property
// (`obj.x = () => …`, `this.y = function …`) for allocation in old space. Such a closure outlives
// the request that made it until the next full GC, and every minor GC keeps what it closes over
// alive and promotes it: under kernel load this held the main thread's whole request graph
// (scavenges of up to 10 ms). Server code names the function first, or builds it in an object
// literal or a helper, all of which V8 allocates young.
const ROOT = projectRoot();
// the browser pages are not the server's heap
const FOLDERS = ['src', 'workers'];
const SKIP = [join('src', 'ui', 'client')];
// a member target (`.name` or `]`), one `=`, then `function` or an arrow's head (parentheses around
// a literal do not change what V8 sees); a declaration (whose type may end in `]`) binds a name,
// not a property
const DECLARATION = /^\s*(?:export\s+)?(?:const|let|var)\s/;
const LITERAL_TO_PROPERTY = /(?:\.[A-Za-z_$][\w$]*|\])\s*=(?![=>])\s*\(?\s*(?:async\s+)?(?:function\b|\([^()]*\)(?:\s*:\s*[^=;{}]+)?\s*=>|[A-Za-z_$][\w$]*\s*=>)/;

/** A line of code (not a comment) that assigns a function literal straight to a property. */
function assigns(line: string): boolean {
  return !/^\s*(\/\/|\*)/.test(line) && !DECLARATION.test(line) && LITERAL_TO_PROPERTY.test(line);
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (SKIP.includes(relative(ROOT, path))) continue;
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (path.endsWith('.ts')) yield path;
  }
}

describe('closures in server code', () => {
  it('the pattern finds what it is meant to find, and leaves the young forms alone', () => {
    for (const s of ['this.stop = () => {', 'parser.onerror = (err) => fail(err)', 'client.release = (err?: Error | boolean): void => {', 'x.y = async (a, b) => a', 'o[k] = function () {', 'hub.on = v => v', 'res.write = ((chunk: unknown) => {'])
      expect(assigns(s), s).to.equal(true);
    for (const s of ['const stop = () => {', "const onPause: FlightRunner['onPause'] = (paused) =>", 'this.stop = stop;', 'Object.assign(parser, handlers);', 'if (a.b === () => 1)', 'const f = (a: number) => a.b >= 2', 'onerror: (err) => fail(err),', '// this.x = () => 1', 'x.y = (0, () => 1)'])
      expect(assigns(s), s).to.equal(false);
  });

  it('no function literal is assigned straight to a property in src or workers (the browser pages aside)', () => {
    const offenders: string[] = [];
    let scanned = 0;
    for (const folder of FOLDERS) {
      for (const path of sources(join(ROOT, folder))) {
        scanned += 1;
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (assigns(line)) offenders.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(scanned, 'files scanned').to.be.greaterThan(100);
    expect(offenders).to.deep.equal([]);
  });
});
