"use strict";
// The hall at a glance (issue 41, point 3): each board a tile where its table stands in the room
// (the plan file, hall/plan.py), its colour and its symbol saying what the list's word says;
// a click opens the board. Boards the plan does not place (or every board, with no plan) follow
// in board order. Uses index.js's status(), byBoard() and text(), called once every script is in.

// a symbol for each state, so the map reads without colour too
const MAP_SYMBOLS = {calling: "☎", silent: "✕", fault: "⚠", missing: "…", overtime: "−", stopped: "■",
  playing: "▶", ready: "○", ended: "✓", none: "·"};
// with no plan: rows about as wide as a screen is wide for its height (200 boards: 19 a row)
function mapColumns(n) { return Math.max(1, Math.min(40, Math.ceil(Math.sqrt(n * 16 / 9)))); }
// where each board's tile goes: {tiles: [{clock, board, key, word, symbol, row, column}], rows,
// columns}, rows and columns from 0; `places` is the plan's {board: [row, column]} ({}: none)
function mapLayout(boards, places) {
  const placed = [], rest = [];
  let rows = 0, columns = 0;
  for (const b of boards) {
    const at = Object.prototype.hasOwnProperty.call(places, String(b.board)) ? places[String(b.board)] : null;
    if (at) {
      placed.push([b, at[0], at[1]]);
      rows = Math.max(rows, at[0] + 1);
      columns = Math.max(columns, at[1] + 1);
    } else rest.push(b);
  }
  rest.sort(byBoard);
  const wide = placed.length ? Math.max(columns, 10) : mapColumns(rest.length);
  const first = placed.length ? rows + 1 : 0;  // a row of nothing between the room and the others
  rest.forEach((b, i) => placed.push([b, first + Math.floor(i / wide), i % wide]));
  columns = Math.max(columns, rest.length ? Math.min(wide, rest.length) : 0);
  rows = rest.length ? first + Math.ceil(rest.length / wide) : rows;
  const tiles = placed.map(([b, row, column]) => {
    const st = status(b);
    return {clock: b.clock, board: String(b.board), key: st.key, word: st.word, symbol: MAP_SYMBOLS[st.key], row, column};
  });
  return {tiles, rows, columns};
}
let plan = {};
function drawMap(boards) {
  const holder = document.getElementById("map-grid"), laid = mapLayout(boards, plan);
  // a tile at most 8rem wide: a small room stays compact, 200 boards share the screen
  holder.style.gridTemplateColumns = "repeat(" + Math.max(1, laid.columns) + ", minmax(0, 8rem))";
  const had = {};
  for (const node of holder.children) had[node.dataset.clock] = node;
  holder.replaceChildren(...laid.tiles.map(t => {
    const node = had[t.clock] || document.createElement("a");
    node.className = "tile s-" + t.key;
    node.href = "/board/" + encodeURIComponent(t.clock);
    node.dataset.clock = t.clock;
    node.dataset.status = t.key;
    node.title = "Board " + t.board + ": " + t.word;
    node.style.gridRow = String(t.row + 1);
    node.style.gridColumn = String(t.column + 1);
    node.replaceChildren(text("span", "num", t.board), text("span", "sym", t.symbol));
    return node;
  }));
}
// the map or the list, as the director last chose on this laptop
let mapShown = localStorage.getItem("tileclock-view") === "map";
function showView() {
  document.getElementById("map").hidden = !mapShown;
  document.getElementById("list").hidden = mapShown;
  const button = document.getElementById("view");
  button.textContent = mapShown ? "List of boards" : "Map of the room";
  button.setAttribute("aria-pressed", String(mapShown));
}
async function loadPlan() {
  const answer = await fetch("/api/plan");
  plan = answer.ok ? (await answer.json()).places || {} : {};
  document.getElementById("map-source").textContent = Object.keys(plan).length ?
    "Laid out as the room's plan (--plan)." : "No plan of the room (tileclock hall --plan FILE): boards in order.";
  if (snapshot) drawMap(snapshot.boards);
}
