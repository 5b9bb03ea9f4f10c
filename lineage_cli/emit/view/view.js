/* The lineage viewer: lays out and draws a lineage answer (the JSON of `lineage up/down --format json`) as inline SVG.
 *
 * The graph is the embedded document, or what a lineage server (config.api) answers around the centre node.  The
 * centre (the queried nodes) sits in column 0, upstream nodes in columns to the left by hop distance, downstream
 * ones to the right; barycentre sweeps order each column to keep crossings low, and every tie is broken by name so
 * that the same answer is drawn the same way every time.  A table folds its columns (`contains` edges), a schema,
 * datamart or workflow group its members (a node's `groups`); the level picks what is folded, a toggle on a node
 * overrides it.  Clicking a node re-walks the graph around it.  window.lineageView is the page's API for tests
 * and scripts: snapshot() returns what is drawn.
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const config = JSON.parse($("lineage-config").textContent);
  const embedded = JSON.parse($("lineage-data").textContent);
  const api = config.api;
  const params = new URLSearchParams(location.search);

  // More drawn nodes than this and the view opens folded (tables, then groups), to unfold on demand.
  const THRESHOLD = Number(params.get("threshold")) || 1500;
  const DATASETS = new Set(["table", "view", "parameterized"]);
  const STEPS = new Set(["transformation", "module", "workflow"]);
  const GROUP_KINDS = new Set(["schema", "datamart", "workflow"]);
  const MEMBERSHIP = new Set(["contains", "member"]);
  const LEVELS = ["column", "table", "schema", "datamart", "workflow"];
  const FILL = {
    table: "#8ECAE6", view: "#B7E4C7", column: "#FFE8A3", transformation: "#F4A261", module: "#CDB4DB",
    workflow: "#FFC8DD", parameterized: "#D4ECF7", schema: "#C9E2F2", datamart: "#CFEBD8",
  };
  // Shorter dashes for more frequent runs; a run that happens once is solid (emit/style.py's order).
  const FREQUENCY_DASH = {
    continuous: "1.5 3", streaming: "1.5 3", minutely: "1.5 3", hourly: "3 3", daily: "8 4", weekly: "14 4",
    monthly: "20 5", quarterly: "26 5", yearly: "32 6", once: "",
  };
  const FREQUENCIES = Object.keys(FREQUENCY_DASH);
  const PREDICATE_DASH = "6 4";
  const DOTTED = "2 3";
  const TYPE_ORDER = ["projection", "flow", "write", "read", "column_write", "default", "predicate"];
  const NODE_H = 22, ROW_GAP = 6, BLOCK_GAP = 16, FRAME_LABEL = 16, COLUMN_GAP = 90, CHAR_W = 6.6;

  // -- the graph ----------------------------------------------------------------------------------------------
  const graph = { nodes: new Map(), edges: [], keys: new Set(), out: new Map(), into: new Map(), groups: new Map() };

  function resetGraph() {
    graph.nodes.clear(); graph.edges = []; graph.keys.clear(); graph.out.clear(); graph.into.clear(); graph.groups.clear();
  }

  function addDocument(doc) {
    for (const n of doc.nodes || []) {
      const known = graph.nodes.get(n.name);
      if (known) {
        for (const key of Object.keys(n)) if (known[key] === undefined) known[key] = n[key];
      } else {
        graph.nodes.set(n.name, Object.assign({ id: n.name, parent: null, children: [] }, n));
      }
    }
    for (const e of doc.edges || []) {
      const key = e.source + "\u0000" + e.target + "\u0000" + e.type;
      if (graph.keys.has(key) || !graph.nodes.has(e.source) || !graph.nodes.has(e.target)) continue;
      graph.keys.add(key);
      if (MEMBERSHIP.has(e.type)) {
        // contains: table -> column; member: statement -> module -> workflow
        const [whole, part] = e.type === "contains" ? [e.source, e.target] : [e.target, e.source];
        const child = graph.nodes.get(part);
        if (!child.parent) { child.parent = whole; graph.nodes.get(whole).children.push(part); }
        continue;
      }
      const edge = Object.assign({ subtypes: [] }, e);
      graph.edges.push(edge);
      push(graph.out, e.source, edge);
      push(graph.into, e.target, edge);
    }
  }

  function push(map, key, value) {
    const list = map.get(key);
    if (list) list.push(value); else map.set(key, [value]);
  }

  // A schema, datamart or workflow that folds members: the node of that name when the answer has one (a
  // workflow of `--walkplan workflows`), else made here.
  function groupNode(kind, name) {
    const real = graph.nodes.get(name);
    if (real && real.kind === kind) return real;
    const id = kind + ":" + name;
    let group = graph.groups.get(id);
    if (!group) {
      group = { id, name, kind, synthetic: true, parent: null, children: [] };
      graph.groups.set(id, group);
    }
    return group;
  }

  // -- what is folded -----------------------------------------------------------------------------------------
  const state = {
    roots: [], level: "table", overrides: new Map(), predicates: false,
    k: 1, tx: 0, ty: 0, drawn: null, matches: new Set(), walkplan: params.get("walkplan"), depth: params.get("depth"),
    asked: params.get("level"), // the level a server rolls its answers up to: none until one is asked for
  };

  function container(n) {
    if (n.parent) return graph.nodes.get(n.parent);
    const groups = n.groups || {};
    if (DATASETS.has(n.kind)) {
      const by = state.level === "datamart" ? "datamart" : "schema";
      return groups[by] ? groupNode(by, groups[by]) : null;
    }
    if (STEPS.has(n.kind) && n.kind !== "workflow" && groups.workflow) return groupNode("workflow", groups.workflow);
    return null;
  }

  function isContainer(n) {
    return n.synthetic || n.children.length > 0;
  }

  // What a +/- unfolds: a container, or from a server a table whose columns are not fetched yet.
  function foldable(n) {
    return isContainer(n) || Boolean(api && DATASETS.has(n.kind) && !n.fetched);
  }

  function collapsed(n) {
    if (!foldable(n)) return false;
    if (state.overrides.has(n.id)) return state.overrides.get(n.id);
    if (DATASETS.has(n.kind)) return state.level !== "column";
    if (n.kind === "module") return state.level === "workflow";
    return n.kind === state.level;
  }

  // The node drawn for n: its outermost folded container, or itself.
  function representative(n, cache) {
    let found = cache.get(n.id);
    if (found) return found;
    found = n;
    for (let up = container(n); up; up = container(up)) if (collapsed(up)) found = up;
    cache.set(n.id, found);
    return found;
  }

  // -- the neighbourhood of the centre ------------------------------------------------------------------------
  // A walk up and down from the roots along the edges between nodes of one tier (datasets and statements, or
  // columns), as the walkplan that made the answer went; then the columns of every table reached, and the
  // containers of every node.
  function tier(n) {
    return n.kind === "column" ? 1 : 0;
  }

  function neighbourhood(roots) {
    const starts = roots.filter((r) => graph.nodes.has(r));
    const reached = new Set(starts);
    for (const [adjacent, end] of [[graph.into, "source"], [graph.out, "target"]]) {
      const queue = [...starts];
      const seen = new Set(queue);
      while (queue.length) {
        const name = queue.pop();
        const from = graph.nodes.get(name);
        for (const e of adjacent.get(name) || []) {
          const next = e[end];
          if (seen.has(next) || tier(graph.nodes.get(next)) !== tier(from)) continue;
          seen.add(next); queue.push(next); reached.add(next);
        }
      }
    }
    for (const name of [...reached]) {
      const n = graph.nodes.get(name);
      if (DATASETS.has(n.kind)) for (const child of n.children) reached.add(child);
      for (let up = n.parent && graph.nodes.get(n.parent); up; up = up.parent && graph.nodes.get(up.parent)) reached.add(up.id);
    }
    return reached;
  }

  // -- the drawn graph ----------------------------------------------------------------------------------------
  function visible(scope) {
    const cache = new Map();
    const nodes = new Map();
    for (const group of graph.groups.values()) group.count = 0;
    for (const name of scope) {
      const n = graph.nodes.get(name);
      const rep = representative(n, cache);
      nodes.set(rep.id, rep);
      if (rep.synthetic && n.kind !== "column") rep.count++;
    }
    const merged = new Map();
    const layering = new Map();
    for (const e of graph.edges) {
      if (!scope.has(e.source) || !scope.has(e.target)) continue;
      const s = representative(graph.nodes.get(e.source), cache), t = representative(graph.nodes.get(e.target), cache);
      if (s === t && (e.source !== e.target || s.id !== e.source)) continue; // folded into one node: no loop of its own
      const key = s.id + "\u0000" + t.id;
      layering.set(key, [s.id, t.id]);
      if (e.type === "predicate" && !state.predicates) continue;
      let edge = merged.get(key);
      if (!edge) {
        edge = { source: s.id, target: t.id, types: new Set(), subtypes: new Set(), rows: null, frequency: null, dotted: true };
        merged.set(key, edge);
      }
      edge.types.add(e.type);
      for (const subtype of e.subtypes) edge.subtypes.add(subtype);
      if (typeof e.rows === "number") edge.rows = Math.max(edge.rows || 0, e.rows);
      const frequency = typeof e.frequency === "string" ? e.frequency.trim().toLowerCase() : null;
      const oftener = edge.frequency === null || FREQUENCIES.indexOf(frequency) < FREQUENCIES.indexOf(edge.frequency);
      if (frequency in FREQUENCY_DASH && oftener) edge.frequency = frequency; // the most frequent run of those merged
      edge.dotted = edge.dotted && (e.subtypes.includes("DECLARED") || e.subtypes.includes("APPROXIMATE"));
    }
    const edges = [...merged.values()];
    for (const edge of edges) edge.kind = TYPE_ORDER.find((t) => edge.types.has(t)) || [...edge.types][0];
    return { nodes, edges, layering: [...layering.values()], cache };
  }

  function foldedCount(scope) {
    const cache = new Map(), seen = new Set();
    for (const name of scope) seen.add(representative(graph.nodes.get(name), cache).id);
    return seen.size;
  }

  // -- layout -------------------------------------------------------------------------------------------------
  function layers(view) {
    const { nodes, layering, cache } = view;
    const roots = new Set(), centre = new Set();
    for (const r of state.roots) {
      const n = graph.nodes.get(r);
      if (!n) continue;
      const rep = representative(n, cache);
      roots.add(rep.id);
      centre.add(rep.id);
      if (rep === n && DATASETS.has(n.kind) && !collapsed(n)) for (const c of n.children) if (nodes.has(c)) roots.add(c);
    }
    const succ = new Map(), pred = new Map();
    for (const [s, t] of layering) { push(succ, s, t); push(pred, t, s); }
    const distance = (adjacent) => {
      const found = new Map([...roots].map((r) => [r, 0]));
      let frontier = [...roots];
      while (frontier.length) {
        const next = [];
        for (const id of frontier) for (const m of adjacent.get(id) || []) {
          if (!found.has(m)) { found.set(m, found.get(id) + 1); next.push(m); }
        }
        frontier = next;
      }
      return found;
    };
    const up = distance(pred), down = distance(succ);
    const layer = new Map();
    for (const id of nodes.keys()) {
      const u = up.get(id), d = down.get(id);
      if (u !== undefined && (d === undefined || u <= d)) layer.set(id, -u);
      else if (d !== undefined) layer.set(id, d);
    }
    // What no walk reached sits by its table (a column), its columns (a table), or a placed neighbour.
    for (let pass = 0, changed = true; changed && pass < 50; pass++) {
      changed = false;
      for (const [id, n] of nodes) {
        if (layer.has(id)) continue;
        let at;
        if (n.parent && layer.has(n.parent)) at = layer.get(n.parent);
        if (at === undefined && n.children) {
          const placed = n.children.filter((c) => layer.has(c)).map((c) => layer.get(c));
          if (placed.length) at = placed.reduce((a, b) => (Math.abs(b) < Math.abs(a) ? b : a));
        }
        const before = (pred.get(id) || []).find((m) => layer.has(m));
        const after = (succ.get(id) || []).find((m) => layer.has(m));
        if (at === undefined && before !== undefined) at = layer.get(before) + 1;
        if (at === undefined && after !== undefined) at = layer.get(after) - 1;
        if (at !== undefined) { layer.set(id, at); changed = true; }
      }
    }
    for (const id of nodes.keys()) if (!layer.has(id)) layer.set(id, 0);
    return { layer, roots: centre };
  }

  // The frames a node is drawn in, outermost first: an unfolded group, then an unfolded table.
  function frameKey(n) {
    const parent = n.parent && graph.nodes.get(n.parent);
    let table = null;
    if (parent && DATASETS.has(parent.kind)) table = parent;
    else if (isContainer(n) && DATASETS.has(n.kind)) table = n;
    let group = "";
    for (let up = container(table || n); up; up = container(up)) if (up.synthetic && !collapsed(up)) { group = up.id; break; }
    return [group, table ? table.id : ""];
  }

  function order(view, layer) {
    const byLayer = new Map();
    const keys = new Map();
    for (const [id, n] of view.nodes) { push(byLayer, layer.get(id), id); keys.set(id, frameKey(n)); }
    const names = (id) => view.nodes.get(id).name;
    const compareText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
    const compareName = (a, b) => compareText(names(a), names(b)) || compareText(a, b);
    const position = new Map();
    const place = (ids) => ids.forEach((id, i) => position.set(id, ids.length > 1 ? i / (ids.length - 1) : 0.5));
    for (const [L, ids] of byLayer) {
      ids.sort((a, b) => {
        const ka = keys.get(a), kb = keys.get(b);
        return compareText(ka[0], kb[0]) || compareText(ka[1], kb[1]) || header(b) - header(a) || compareName(a, b);
      });
      place(ids);
      byLayer.set(L, ids);
    }
    function header(id) { const n = view.nodes.get(id); return isContainer(n) && DATASETS.has(n.kind) && !collapsed(n) ? 1 : 0; }
    // each node's neighbours in the columns left of its own and right of it, whichever way the edge points
    const left = new Map(), right = new Map();
    for (const e of view.edges) {
      const [near, far] = layer.get(e.source) <= layer.get(e.target) ? [e.source, e.target] : [e.target, e.source];
      if (layer.get(near) === layer.get(far)) continue;
      push(right, near, far);
      push(left, far, near);
    }
    const sorted = [...byLayer.keys()].sort((a, b) => a - b);
    for (let sweep = 0; sweep < 8; sweep++) {
      const forward = sweep % 2 === 0;
      for (const L of forward ? sorted : [...sorted].reverse()) {
        const ids = byLayer.get(L);
        const bary = new Map();
        for (const id of ids) {
          const near = (forward ? left : right).get(id) || [];
          bary.set(id, near.length ? near.reduce((sum, m) => sum + position.get(m), 0) / near.length : position.get(id));
        }
        byLayer.set(L, blocks(ids, bary, keys, header, compareName));
        place(byLayer.get(L));
      }
    }
    return { byLayer, sorted, keys, header };
  }

  // A column's order: its frames kept together (an unfolded group, in it each unfolded table, its header first),
  // frames and nodes each by their mean barycentre.
  function blocks(ids, bary, keys, header, compareName) {
    const mean = (list) => list.reduce((sum, id) => sum + bary.get(id), 0) / list.length;
    const byAt = (a, b) => a.at - b.at || compareName(a.members[0], b.members[0]);
    // the runs of one frame depth: each frame a block, each node outside any frame a block of its own
    const runs = (list, depth, within) => {
      const frames = new Map();
      for (const id of list) push(frames, keys.get(id)[depth], id);
      const found = [];
      for (const [key, members] of frames) {
        if (key === "") for (const id of members) found.push(...within([id]));
        else { const inner = within(members).flatMap((block) => block.members); found.push({ members: inner, at: mean(inner) }); }
      }
      return found.sort(byAt);
    };
    const rowOrder = (a, b) => header(b) - header(a) || bary.get(a) - bary.get(b) || compareName(a, b);
    const rows = (members) => [{ members: members.sort(rowOrder), at: mean(members) }];
    return runs(ids, 0, (members) => runs(members, 1, rows)).flatMap((block) => block.members);
  }

  function label(n) {
    if (n.synthetic) return `${n.name} (${n.kind}${collapsed(n) ? ", " + n.count : ""})`;
    const parent = n.parent && graph.nodes.get(n.parent);
    if (parent && !collapsed(parent) && n.name.startsWith(parent.name + ".")) return n.name.slice(parent.name.length + 1);
    return n.name;
  }

  function geometry(view, layer, ordering) {
    const { byLayer, sorted, keys } = ordering;
    const width = new Map(), x = new Map(), place = new Map();
    for (const L of sorted) {
      const longest = byLayer.get(L).reduce((most, id) => Math.max(most, label(view.nodes.get(id)).length), 0);
      width.set(L, Math.min(360, Math.max(120, longest * CHAR_W + 40)));
    }
    const at0 = sorted.includes(0) ? 0 : sorted[0];
    x.set(at0, 0);
    const apart = (a, b) => width.get(a) / 2 + COLUMN_GAP + width.get(b) / 2; // centre to centre
    for (let i = sorted.indexOf(at0) + 1; i < sorted.length; i++) {
      x.set(sorted[i], x.get(sorted[i - 1]) + apart(sorted[i - 1], sorted[i]));
    }
    for (let i = sorted.indexOf(at0) - 1; i >= 0; i--) x.set(sorted[i], x.get(sorted[i + 1]) - apart(sorted[i + 1], sorted[i]));
    const frames = [];
    for (const L of sorted) {
      const ids = byLayer.get(L), w = width.get(L), cx = x.get(L);
      let y = 0, previous = null, frame = null;
      const column = [];
      for (const id of ids) {
        const [group, table] = keys.get(id);
        if (previous) {
          const [pg, pt] = keys.get(previous);
          if (group !== pg) y += BLOCK_GAP + (group ? FRAME_LABEL : 0);
          else if (table && table === pt) y += 0;
          else if (table || pt) y += BLOCK_GAP / 2;
          else y += ROW_GAP;
        } else if (group) y += FRAME_LABEL;
        if (group && (!frame || frame.group !== group)) {
          frame = { group, L, top: y - FRAME_LABEL, bottom: y + NODE_H, x: cx - w / 2 - 8, width: w + 16 };
          frames.push(frame);
        } else if (!group) frame = null;
        if (frame) frame.bottom = y + NODE_H + 6;
        column.push([id, y + NODE_H / 2]);
        y += NODE_H;
        previous = id;
      }
      const shift = y / 2;
      for (const [id, cy] of column) place.set(id, { x: cx, y: cy - shift, w, L });
      for (const f of frames) if (f.L === L) { f.top -= shift; f.bottom -= shift; }
    }
    return { place, frames };
  }

  // -- drawing ------------------------------------------------------------------------------------------------
  const escapes = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
  const esc = (text) => String(text).replace(/[&<>"]/g, (c) => escapes[c]);

  function fitted(text, room) {
    const chars = Math.max(4, Math.floor(room / CHAR_W));
    return text.length <= chars ? text : "\u2026" + text.slice(text.length - chars + 1);
  }

  // An arrow head at (x, y) pointing right (way 1) or left (-1).
  function chevron(x, y, way) {
    return `M${x - 7 * way},${y - 3.5}L${x},${y}L${x - 7 * way},${y + 3.5}`;
  }

  function rowsWidth(rows) {
    return Math.round(Math.min(6, 1 + Math.max(0, Math.log10(Math.max(rows, 1)) - 3)) * 10) / 10;
  }

  function line(edge) {
    const width = edge.rows === null ? 1.2 : rowsWidth(edge.rows);
    let dash = "";
    if (edge.dotted) dash = DOTTED;
    else if (edge.frequency !== null) dash = FREQUENCY_DASH[edge.frequency];
    else if (edge.kind === "predicate") dash = PREDICATE_DASH;
    return { width, dash };
  }

  function draw() {
    const started = performance.now();
    const scope = neighbourhood(state.roots);
    const view = visible(scope);
    const { layer, roots } = layers(view);
    const ordering = order(view, layer);
    const { place, frames } = geometry(view, layer, ordering);
    const frameParts = [];
    for (const f of frames) {
      const group = graph.groups.get(f.group) || graph.nodes.get(f.group);
      frameParts.push(`<rect class="frame ${esc(group.kind)}" x="${f.x}" y="${f.top}" width="${f.width}" height="${f.bottom - f.top}" rx="6"></rect>`,
        `<text class="frame-label" x="${f.x + 6}" y="${f.top + 11}">${esc(group.name)}</text>`);
    }
    const edgeParts = [];
    view.edges.forEach((e, i) => {
      const a = place.get(e.source), b = place.get(e.target);
      const x1 = a.x + a.w / 2, x2 = b.x - b.w / 2;
      const bend = Math.max(40, Math.abs(x2 - x1) / 2);
      // The arrow head is a chevron in the path itself: an SVG marker on thousands of edges halves the frame rate.
      let path;
      if (e.source === e.target) { // a table that a statement reads and writes: a loop off its right end
        path = `M${x1},${a.y - 5}C${x1 + 30},${a.y - 22} ${x1 + 30},${a.y + 22} ${x1 + 1},${a.y + 5}` + chevron(x1 + 1, a.y + 5, -1);
      } else if (a.L === b.L) { // within one column: a bracket off its right side
        const out = 24 + Math.min(70, Math.abs(b.y - a.y) / 10), end = b.x + b.w / 2;
        path = `M${x1},${a.y}C${x1 + out},${a.y} ${end + out},${b.y} ${end},${b.y}` + chevron(end, b.y, -1);
      } else {
        path = `M${x1},${a.y}C${x1 + bend},${a.y} ${x2 - bend},${b.y} ${x2},${b.y}` + chevron(x2, b.y, 1);
      }
      const { width, dash } = line(e);
      edgeParts.push(`<path class="e ${esc(e.kind)}" data-i="${i}" d="${path}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ""}></path>`);
    });
    const nodeParts = [];
    for (const [id, n] of view.nodes) {
      const p = place.get(id);
      const toggle = foldable(n);
      const classes = ["n", n.kind];
      if (roots.has(id)) classes.push("root");
      if (n.role) classes.push(n.role);
      if (state.matches.has(id)) classes.push("match");
      if (toggle && !collapsed(n) && DATASETS.has(n.kind)) classes.push("header");
      const text = fitted(label(n), p.w - (toggle ? 34 : 16));
      nodeParts.push(`<g class="${classes.map(esc).join(" ")}" data-id="${esc(id)}" transform="translate(${p.x - p.w / 2},${p.y - NODE_H / 2})">`,
        `<rect width="${p.w}" height="${NODE_H}" rx="${n.kind === "column" ? 9 : 3}" fill="${FILL[n.kind] || "#E0E0E0"}"></rect>`,
        `<text x="8" y="${NODE_H / 2}">${esc(text)}</text>`);
      if (toggle) {
        nodeParts.push(`<g class="toggle-btn" data-toggle="${esc(id)}"><rect class="toggle" x="${p.w - 19}" y="4" width="14" height="14" rx="2"></rect>`,
          `<text class="toggle-mark" x="${p.w - 12}" y="${NODE_H / 2}" text-anchor="middle">${collapsed(n) ? "+" : "\u2212"}</text></g>`);
      }
      nodeParts.push("</g>");
    }
    if (view.nodes.size) $("empty")?.remove();
    $("frames").innerHTML = frameParts.join("");
    $("edges").innerHTML = edgeParts.join("");
    $("nodes").innerHTML = nodeParts.join("");
    state.drawn = { view, place, roots, frames };
    legend(view.edges);
    $("status").textContent = `${view.nodes.size} nodes, ${view.edges.length} edges drawn \u00b7 ${Math.round(performance.now() - started)} ms`;
  }

  function legend(edges) {
    const sample = (label, width, dash) =>
      `<div><svg><line x1="2" y1="5" x2="42" y2="5" stroke="#4a4e69" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ""}></line></svg>${esc(label)}</div>`;
    const parts = [sample("projection, flow", 1.2, ""), sample("predicate", 1.2, PREDICATE_DASH), sample("declared, approximate", 1.2, DOTTED)];
    const rows = [...new Set(edges.filter((e) => e.rows !== null).map((e) => e.rows))].sort((a, b) => a - b);
    for (const count of rows) parts.push(sample(count.toLocaleString("en") + " rows", rowsWidth(count), ""));
    const known = new Set(edges.filter((e) => e.frequency !== null).map((e) => e.frequency));
    for (const frequency of FREQUENCIES) if (known.has(frequency)) parts.push(sample(frequency, 1.2, FREQUENCY_DASH[frequency]));
    if (rows.length || known.size) parts.push("<div>width: rows per run \u00b7 dashes: update frequency</div>");
    $("legend").innerHTML = parts.join("");
  }

  // -- camera -------------------------------------------------------------------------------------------------
  const svg = $("canvas"), scene = $("scene");

  function applyCamera() {
    scene.setAttribute("transform", `translate(${state.tx},${state.ty}) scale(${state.k})`);
  }

  function bounds(ids) {
    const { place } = state.drawn;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const id of ids) {
      const p = place.get(id);
      if (!p) continue;
      x0 = Math.min(x0, p.x - p.w / 2);
      x1 = Math.max(x1, p.x + p.w / 2);
      y0 = Math.min(y0, p.y - NODE_H / 2);
      y1 = Math.max(y1, p.y + NODE_H / 2);
    }
    return x0 === Infinity ? null : { x0, x1, y0, y1 };
  }

  function centre() {
    const box = bounds(state.drawn.roots);
    const all = bounds(state.drawn.place.keys());
    if (!box || !all) return;
    const W = svg.clientWidth, H = svg.clientHeight;
    // as much of the whole as fits around the centre, without shrinking names past reading
    const half = Math.max(box.x1 - Math.min(all.x0, 0) , Math.max(all.x1, 0) - box.x0, 1);
    state.k = Math.max(0.35, Math.min(1, W / (2 * half + 80), H / (all.y1 - all.y0 + 80)));
    state.tx = W / 2 - state.k * (box.x0 + box.x1) / 2;
    state.ty = H / 2 - state.k * (box.y0 + box.y1) / 2;
    applyCamera();
  }

  function fit() {
    const all = bounds(state.drawn.place.keys());
    if (!all) return;
    const W = svg.clientWidth, H = svg.clientHeight;
    state.k = Math.min(2, W / (all.x1 - all.x0 + 40), H / (all.y1 - all.y0 + 40));
    state.tx = W / 2 - state.k * (all.x0 + all.x1) / 2;
    state.ty = H / 2 - state.k * (all.y0 + all.y1) / 2;
    applyCamera();
  }

  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, y: event.clientY, tx: state.tx, ty: state.ty, moved: false };
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    svg.classList.add("panning");
    state.tx = drag.tx + dx; state.ty = drag.ty + dy;
    applyCamera();
  });
  window.addEventListener("pointerup", () => {
    svg.classList.remove("panning");
    setTimeout(() => { drag = null; }, 0);
  });
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const rect = svg.getBoundingClientRect();
    const mx = event.clientX - rect.left, my = event.clientY - rect.top;
    const k = Math.max(0.02, Math.min(4, state.k * Math.exp(-event.deltaY * 0.0015)));
    state.tx = mx - (mx - state.tx) * (k / state.k);
    state.ty = my - (my - state.ty) * (k / state.k);
    state.k = k;
    applyCamera();
  }, { passive: false });

  // -- interaction --------------------------------------------------------------------------------------------
  function nodeOf(id) {
    return graph.nodes.get(id) || graph.groups.get(id);
  }

  svg.addEventListener("click", (event) => {
    if (drag && drag.moved) return;
    const toggle = event.target.closest("[data-toggle]");
    if (toggle) { flip(toggle.getAttribute("data-toggle")); return; }
    const g = event.target.closest(".n");
    if (g) recentre(g.getAttribute("data-id"));
  });

  svg.addEventListener("mouseover", (event) => {
    const g = event.target.closest(".n"), path = event.target.closest(".e");
    if (g) showTip(event, nodeTip(nodeOf(g.getAttribute("data-id"))));
    else if (path) showTip(event, edgeTip(state.drawn.view.edges[Number(path.getAttribute("data-i"))]));
  });
  svg.addEventListener("mousemove", (event) => { if (!$("tip").hidden) moveTip(event); });
  svg.addEventListener("mouseout", () => { $("tip").hidden = true; });

  function rows(pairs) {
    const known = pairs.filter(([, v]) => v !== undefined && v !== null && v !== "");
    return "<dl>" + known.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("") + "</dl>";
  }

  function nodeTip(n) {
    const incoming = (state.drawn.view.edges || []).filter((e) => e.target === n.id);
    const subtypes = [...new Set(incoming.flatMap((e) => [...e.subtypes]))].join(", ");
    const members = isContainer(n) ? String(n.synthetic ? n.count : n.children.length) : null;
    return rows([
      ["name", esc(n.name)], ["kind", esc(n.kind)], ["role", n.role && esc(n.role)], ["subtype", esc(subtypes)],
      ["file", n.file ? esc(n.file + (n.line ? ":" + n.line : "")) : null], ["members", members],
      ["expression", expressionNote(n)],
    ]);
  }

  // A column's expression: the one statement's, or a line per statement (`statement: expression`) when several
  // write it, as the pictures' notes have it (ResultNode.expression_note).
  function expressionNote(n) {
    if (Array.isArray(n.expressions) && n.expressions.length > 1) {
      return `<pre>${esc(n.expressions.map((x) => `${x.statement}: ${x.expression}`).join("\n"))}</pre>`;
    }
    return typeof n.expression === "string" ? `<pre>${esc(n.expression)}</pre>` : null;
  }

  function edgeTip(e) {
    return rows([
      ["edge", esc(nodeOf(e.source).name) + " \u2192 " + esc(nodeOf(e.target).name)], ["kind", esc(e.kind)],
      ["subtype", esc([...e.subtypes].join(", "))], ["rows", e.rows === null ? null : e.rows.toLocaleString("en")], ["frequency", e.frequency && esc(e.frequency)],
    ]);
  }

  function showTip(event, content) {
    const tip = $("tip");
    tip.innerHTML = content;
    tip.hidden = false;
    moveTip(event);
  }

  function moveTip(event) {
    const tip = $("tip"), rect = $("stage").getBoundingClientRect();
    tip.style.left = Math.min(event.clientX - rect.left + 14, rect.width - tip.offsetWidth - 4) + "px";
    tip.style.top = Math.min(event.clientY - rect.top + 14, rect.height - tip.offsetHeight - 4) + "px";
  }

  async function flip(id, folded) {
    const n = nodeOf(id);
    if (!n || !foldable(n)) return;
    const wanted = folded === undefined ? !collapsed(n) : folded;
    if (api && !wanted && !n.fetched && DATASETS.has(n.kind)) await fetchColumns(n);
    state.overrides.set(id, wanted);
    redraw(false);
  }

  async function recentre(id) {
    const n = nodeOf(id);
    if (!n) return;
    if (n.synthetic) { await flip(id, false); return; }
    if (api) await fetchAround(n.name);
    else state.roots = [n.name];
    redraw(true);
  }

  function redraw(recentring) {
    $("tip").hidden = true;
    draw();
    if (recentring) centre();
  }

  function setLevel(level) {
    state.level = level;
    state.asked = level;
    state.overrides.clear();
    $("level").value = level;
    if (api && state.roots.length) return fetchAround(state.roots[0]).then(() => redraw(true));
    redraw(true);
    return Promise.resolve();
  }

  function setPredicates(shown) {
    state.predicates = Boolean(shown);
    $("predicates").checked = state.predicates;
    redraw(false);
  }

  // SQL LIKE: % any run, _ any one character, \ escapes; a pattern without % is looked for anywhere in names.
  function anywhere(pattern) {
    return pattern.includes("%") ? pattern : "%" + pattern + "%";
  }

  function likeRegex(text) {
    let source = "";
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === "\\" && i + 1 < text.length) source += text[++i].replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      else if (c === "%") source += ".*";
      else if (c === "_") source += ".";
      else source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    }
    return new RegExp("^" + source + "$", "is");
  }

  async function search(pattern) {
    pattern = anywhere(pattern.trim());
    if (pattern === "%%") { state.matches = new Set(); return []; }
    let found;
    if (api) {
      const answer = await fetchJSON(`${api}/search?q=${encodeURIComponent(pattern)}`);
      found = answer.matches.map((m) => ({ name: m.name, kind: m.kind }));
    } else {
      const regex = likeRegex(pattern);
      found = [...graph.nodes.values()].filter((n) => regex.test(n.name)).map((n) => ({ name: n.name, kind: n.kind }));
      found.sort((a, b) => a.name.length - b.name.length || (a.name < b.name ? -1 : 1));
    }
    state.matches = new Set(found.map((m) => m.name));
    return found;
  }

  let searchTimer = null;
  $("search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(async () => {
      const found = await search($("search").value);
      const list = $("matches");
      list.innerHTML = found.slice(0, 50).map((m) => `<li data-name="${esc(m.name)}">${esc(m.name)}<small>${esc(m.kind)}</small></li>`).join("");
      list.hidden = found.length === 0;
      redraw(false);
    }, 150);
  });
  $("search").addEventListener("keydown", (event) => {
    const first = $("matches").querySelector("li");
    if (event.key === "Enter" && first) pick(first.getAttribute("data-name"));
    if (event.key === "Escape") $("matches").hidden = true;
  });
  $("matches").addEventListener("click", (event) => {
    const li = event.target.closest("li");
    if (li) pick(li.getAttribute("data-name"));
  });

  function pick(name) {
    $("matches").hidden = true;
    recentre(name);
  }

  $("level").addEventListener("change", () => setLevel($("level").value));
  $("predicates").addEventListener("change", () => setPredicates($("predicates").checked));
  $("fit").addEventListener("click", fit);
  $("centre").addEventListener("click", centre);
  window.addEventListener("resize", () => state.drawn && centre());

  // -- a lineage server ---------------------------------------------------------------------------------------
  async function fetchJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`${url}: ${response.status} ${response.statusText}`);
    return response.json();
  }

  function query(direction, name, extra) {
    const asked = new URLSearchParams({ name });
    if (state.asked && state.asked !== "column") asked.set("level", state.asked);
    if (state.depth) asked.set("depth", state.depth);
    if (state.walkplan) asked.set("walkplan", state.walkplan);
    for (const [key, value] of Object.entries(extra || {})) asked.set(key, value);
    return `${api}/${direction}?${asked}`;
  }

  async function fetchAround(name) {
    try {
      const [up, down] = await Promise.all([fetchJSON(query("up", name)), fetchJSON(query("down", name))]);
      resetGraph();
      addDocument(up); addDocument(down);
      state.roots = [...new Set([...(up.roots || []), ...(down.roots || [])])];
    } catch (error) {
      $("status").textContent = String(error.message || error);
    }
  }

  async function fetchColumns(table) {
    const extra = { walkplan: "impact", depth: "1", level: "column" };
    const asked = [query("up", table.name, extra), query("down", table.name, extra)];
    (await Promise.all(asked.map(fetchJSON))).forEach(addDocument);
    table.fetched = true;
  }

  // -- start --------------------------------------------------------------------------------------------------
  function levels() {
    const have = new Set(["table"]);
    for (const n of graph.nodes.values()) {
      if (n.kind === "column") have.add("column");
      for (const by of Object.keys(n.groups || {})) have.add(by);
      if (GROUP_KINDS.has(n.kind)) have.add(n.kind);
    }
    if (api) ["column", "schema", "workflow"].forEach((l) => have.add(l));
    return LEVELS.filter((l) => have.has(l));
  }

  function openingLevel(doc) {
    if (doc && LEVELS.includes(doc.level)) return doc.level;
    if (params.get("level")) return params.get("level");
    const roots = state.roots.map((r) => graph.nodes.get(r)).filter(Boolean);
    return roots.length && roots.every((n) => n.kind === "column") ? "column" : "table";
  }

  // Beyond THRESHOLD nodes: fold the tables, then every group but the centre's.
  function foldToFit() {
    const scope = neighbourhood(state.roots);
    if (foldedCount(scope) <= THRESHOLD) return;
    if (state.level === "column") state.level = "table";
    if (foldedCount(scope) <= THRESHOLD) return;
    const keep = new Set();
    for (const r of state.roots) for (let up = container(graph.nodes.get(r) || {}); up; up = container(up)) keep.add(up.id);
    for (const name of scope) {
      const n = graph.nodes.get(name);
      for (let up = container(n); up; up = container(up)) if (up.synthetic && !keep.has(up.id)) state.overrides.set(up.id, true);
    }
  }

  async function start() {
    const began = performance.now();
    if (embedded) {
      addDocument(embedded);
      state.roots = embedded.roots || [];
    } else if (api && params.get("name")) {
      await fetchAround(params.get("name"));
    }
    state.level = openingLevel(embedded);
    $("level").innerHTML = levels().map((l) => `<option>${l}</option>`).join("");
    foldToFit();
    $("level").value = state.level;
    if (!state.roots.length) {
      $("stage").insertAdjacentHTML("beforeend", `<div id="empty">${api ? "search for a table or column to begin" : "nothing to show"}</div>`);
    }
    draw();
    centre();
    lineageView.timings.firstDraw = performance.now() - began;
    lineageView.drawn = true;
  }

  function snapshot() {
    const rect = svg.getBoundingClientRect();
    const { view, place } = state.drawn;
    return {
      nodes: [...view.nodes.values()].map((n) => {
        const p = place.get(n.id);
        return {
          id: n.id, name: n.name, kind: n.kind, role: n.role || null,
          x: rect.left + state.tx + state.k * p.x, y: rect.top + state.ty + state.k * p.y,
          collapsed: collapsed(n),
        };
      }),
      edges: view.edges.map((e) => ({ source: e.source, target: e.target, kind: e.kind, subtype: [...e.subtypes].join(",") })),
    };
  }

  const lineageView = {
    drawn: false,
    timings: {},
    snapshot,
    recentre: (name) => recentre(name),
    expand: (id) => flip(id, false),
    collapse: (id) => flip(id, true),
    setLevel,
    showPredicates: setPredicates,
    search,
    roots: () => [...state.roots],
    level: () => state.level,
  };
  window.lineageView = lineageView;
  start();
})();
