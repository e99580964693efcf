// Prints every circle in the import graph of src/, file by file and folder by folder, and exits 1 if there is
// one. A circle means neither end can be understood, tested or moved without the other; the layering test
// (test/style/layering.test.ts) keeps folders pointing down, this keeps files from circling inside a folder.
//
// Type-only imports count: they couple the code even when they load nothing. A folder is a top-level folder of
// src/; each top-level file is a node of its own.
//
//   node dist/scripts/import-cycles.js [root]     (root: the repository, by default this one)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** `from -> to` between files of src/, repository paths ending in .ts. */
export interface ImportEdge {
  from: string;
  to: string;
}

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((name) => sourceFiles(join(path, name)));
}

/** Every relative import of a file of `root`/src to another file of it: static, re-exports and dynamic alike. */
export function importEdges(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const path of sourceFiles(join(root, 'src'))) {
    const from = relative(root, path);
    for (const { fileName } of ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = relative(root, resolve(dirname(path), fileName)).replace(/\.js$/, '.ts');
      if (to.startsWith('src/') && to !== from) edges.push({ from, to });
    }
  }
  return edges;
}

/** `src/rfq/shard.ts` → `rfq`; a top-level file is its own folder (`src/config.ts` → `config.ts`). */
export function folderOf(file: string): string {
  return file.split('/')[1]!;
}

/**
 * The strongly connected components of more than one node (Tarjan's algorithm, iterative so that a deep
 * chain cannot overflow the stack), each sorted, the list sorted by its first node.
 */
export function circles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    let targets = next.get(from);
    if (targets === undefined) next.set(from, (targets = new Set()));
    targets.add(to);
    if (!next.has(to)) next.set(to, new Set());
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  for (const start of [...next.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; targets: Iterator<string> }> = [];
    const enter = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, targets: next.get(node)!.values() });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.targets.next();
      if (!step.done) {
        const target = step.value;
        if (!index.has(target)) enter(target);
        else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1) found.push(component.sort());
    }
  }
  return found.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** The folder graph of the same imports (edges inside one folder dropped). */
export function folderEdges(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.map(({ from, to }) => ({ from: folderOf(from), to: folderOf(to) })).filter(({ from, to }) => from !== to);
}

/** The report's lines: each circle with the imports that close it, so the reader sees where to cut. */
export function report(edges: readonly ImportEdge[]): string[] {
  const lines: string[] = [];
  const describe = (kind: string, graph: readonly ImportEdge[]) => {
    for (const circle of circles(graph)) {
      const members = new Set(circle);
      const inside = [...new Set(graph.filter((e) => members.has(e.from) && members.has(e.to)).map((e) => `${e.from} -> ${e.to}`))];
      lines.push(`${kind} circle of ${circle.length}: ${circle.join(', ')}`);
      for (const edge of inside.sort()) lines.push(`  ${edge}`);
    }
  };
  describe('file', edges);
  describe('folder', folderEdges(edges));
  return lines;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? fileURLToPath(new URL('../..', import.meta.url));
  const lines = report(importEdges(root));
  for (const line of lines) console.log(line);
  if (lines.length === 0) console.log('no import circles in src/');
  process.exitCode = lines.length === 0 ? 0 : 1;
}
