// Read a Mermaid flowchart from stdin with Mermaid's own parser (under jsdom: no browser) and print what it
// understood as JSON: the nodes with their labels as a browser shows them, the edges, the subgraphs and the
// classes.  A text Mermaid cannot parse exits 1 with its message on stderr.  tests/emit/test_mermaid.py runs it
// as `node --input-type=module -e SCRIPT` in the folder tests/emit/mermaid_fetch.py installs the packages in
// (an evaluated module finds its packages from the working directory, a file from its own).
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><body></body>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");

// Mermaid keeps a label's #code; entities as placeholders until it draws the label as HTML.
function shown(text) {
  const html = String(text).replace(/ﬂ°°/g, "&#").replace(/ﬂ°/g, "&").replace(/¶ß/g, ";");
  const cell = document.createElement("textarea");
  cell.innerHTML = html;
  return cell.value;
}

let text = "";
for await (const chunk of process.stdin) text += chunk;
try {
  await mermaid.parse(text); // loads the flowchart diagram, and fails on bad syntax
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  const db = diagram.db;
  const out = {
    type: diagram.type,
    direction: db.getDirection(),
    nodes: [...db.getVertices().values()].map((v) => ({ id: v.id, label: shown(v.text), shape: v.type ?? null, classes: v.classes })),
    edges: db.getEdges().map((e) => ({ source: e.start, target: e.end, stroke: e.stroke, label: shown(e.text), style: e.style ?? [] })),
    subgraphs: db.getSubGraphs().map((s) => ({ id: s.id, label: shown(s.title), nodes: s.nodes, classes: s.classes })),
    classes: Object.fromEntries([...db.getClasses().entries()].map(([name, c]) => [name, c.styles])),
  };
  process.stdout.write(JSON.stringify(out));
} catch (error) {
  process.stderr.write(String(error?.message ?? error) + "\n");
  process.exit(1);
}
