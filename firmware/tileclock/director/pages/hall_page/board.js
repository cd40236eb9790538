"use strict";
const clock = decodeURIComponent(location.pathname.split("/").pop());
const base = "/api/board/" + encodeURIComponent(clock);
let boardName = null;  // the board's name, once known: every question names the board, not its clock id
function named() { return boardName ? "Board " + boardName : "clock " + clock; }
// a correction as the buttons say it: +1:00, −0:30
function signed(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  return (ms < 0 ? "−" : "+") + Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}
function clockTime(ms) {
  const s = Math.floor(ms / 1000);
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0") + "." + String(ms % 1000).padStart(3, "0");
}
// a record's event and state in a director's words (the raw names stay in the game's log file)
const EVENTS = {boot: "the clock started up", new_game: "new game", start: "first clock started",
  switch: "turn ended", pause: "STOPPED", resume: "restarted", ignored: "press ignored",
  overtime: "overtime began", penalty: "penalty", forfeit: "forfeit", late_start: "late start",
  arrived: "late player arrived", adjust: "correction", end: "game over", reopen: "game reopened",
  set: "director's settings", status: "status", checkpoint: "checkpoint", recovered: "clock restarted",
  error: "refused", fault: "FAULT", fault_cleared: "fault cleared", call: "CALL to the director",
  call_answer: "call answered", round_start: "the round started", selftest: "self-test", takeover: "taken over from a dead clock"};
const STATES = {ready: "ready", running: "playing", paused: "STOPPED", ended: "ended"};
const REASONS = {stop_hold: "ended by the players", round_over: "round over", overtime_limit: "over the overtime limit",
  absent: "absent", forfeit: "forfeit", restart: "restart", power_cut: "power cut"};
function details(r) {
  const out = [];
  if (r.player) out.push("player " + r.player);
  if (r.button) out.push("button " + r.button);
  if (r.delta_ms) out.push(signed(r.delta_ms));
  if (r.reason) out.push(REASONS[r.reason] || r.reason.replaceAll("_", " "));
  if (r.source) out.push("from the " + (r.source === "serial" ? "director's line" : r.source));
  if (r.by) out.push("by " + r.by);
  if (r.answer) out.push("call " + r.call + " " + r.answer);
  if (r.kind) out.push(r.kind + " penalty");
  if (r.part) out.push(r.part + (r.detail ? ": " + r.detail : ""));
  else if (r.detail) out.push(r.detail);
  if (r.round) out.push("round " + r.round);
  if (r.table) out.push("table " + r.table);
  if (r.clock && r.clock !== clock) out.push("on clock " + r.clock + ", before the move");  // a spare's game: the dead clock's part
  return out.join(", ");
}
function cell(row, value) { const td = document.createElement("td"); td.textContent = value; row.append(td); }
function show(at) {
  document.getElementById("at-text").textContent = clockTime(Number(at));
  document.getElementById("panels").src = base + "/panels.png?at_ms=" + at;
}
async function load() {
  const answer = await fetch(base);
  if (!answer.ok) { document.getElementById("title").textContent = "No game from clock " + clock + " yet"; return; }
  const game = await answer.json();
  boardName = game.board;
  loadedSeq = game.records[game.records.length - 1].seq;
  const opened = game.records.find(r => r.ev === "new_game") || {};
  document.getElementById("title").textContent = "Board " + game.board +
    (opened.round ? ", round " + opened.round : "") + (opened.table ? ", table " + opened.table : "");
  const facts = {"clock id": clock, "its game's first record": game.game_seq,
    "records of this game": game.records.length, "newest record": game.records[game.records.length - 1].seq};
  document.getElementById("clock-facts").replaceChildren(...Object.entries(facts).flatMap(([name, value]) =>
    [Object.assign(document.createElement("dt"), {textContent: name}), Object.assign(document.createElement("dd"), {textContent: value})]));
  const slider = document.getElementById("at");
  const atEnd = Number(slider.value) >= Number(slider.max);  // a director looking back stays there
  slider.max = game.end_ms;
  slider.oninput = () => show(slider.value);
  if (atEnd) { slider.value = game.end_ms; show(game.end_ms); }
  document.getElementById("corrections").replaceChildren(...(game.corrections.length ? game.corrections.map(c => {
    const item = document.createElement("li");
    item.textContent = clockTime(c.t_ms) + ": " + c.player + " " + signed(c.delta_ms);
    return item;
  }) : [Object.assign(document.createElement("li"), {textContent: "none"})]));
  if (game.picture) {
    const img = document.createElement("img");
    img.src = base + "/picture.svg";
    img.alt = "each side's time across the game";
    document.getElementById("picture").replaceChildren(Object.assign(document.createElement("h2"), {textContent: "The game"}), img);
  }
  const rows = game.records.map(r => {
    const row = document.createElement("tr");
    row.className = "ev-" + r.ev;  // prefixed: a bare `call` would be a banner's class
    row.dataset.seq = r.seq;
    [r.seq, clockTime(r.t_ms), EVENTS[r.ev] || r.ev, STATES[r.state] || r.state, r.run || "",
     r.A.shown + (r.A.pen ? " −" + r.A.pen + " pts" : ""), r.B.shown + (r.B.pen ? " −" + r.B.pen + " pts" : ""),
     details(r)].forEach(v => cell(row, v));
    row.onclick = () => { slider.value = r.t_ms; show(r.t_ms); };
    return row;
  });
  document.getElementById("records").replaceChildren(...rows);
}
let loadedSeq = null, reloading = null;
// the game's records, corrections, panels and history again as the board's newest record moves on
function reload() {
  if (reloading) return;
  reloading = setTimeout(() => { reloading = null; load(); history(); }, 300);
}
load();
async function send(path, body, question, yes) {
  if (!await ask(question, yes)) return;
  const reply = await fetch(base + path, {method: "POST", headers: await commandHeaders(), body: new URLSearchParams(body)});
  document.getElementById("sent").textContent = reply.ok ? "sent: " + (await reply.json()).sent : await reply.text();
  setTimeout(history, 1500);
  setTimeout(history, 5000);  // the clock's answer: did it take
}
document.querySelectorAll("#actions button, #speech button, #large button").forEach(button => {
  const {question, ...form} = button.dataset;  // the question is the page's, never sent
  button.onclick = () => send("/command", form, (question || button.textContent) + " on " + named() + "?",
                              button.textContent + " on " + named());
});
// who hears the clock, as its state says it ("A", "B", "AB", "" none; null: an older clock says nothing)
function speechWords(sides) {
  return {"": "off", A: "side A hears", B: "side B hears", AB: "both sides hear"}[sides] || "not said by this clock";
}
// whose panel shows the large-digits face, likewise
function largeWords(sides) {
  return {"": "off", A: "side A", B: "side B", AB: "both sides"}[sides] || "not said by this clock";
}
// a setting per side (`speech`, `large`) as the clock's state says it: its words, its button pressed
function showSides(key, sides, words) {
  document.getElementById(key + "-now").textContent = words(sides);
  document.querySelectorAll("#" + key + " button").forEach(button => {
    button.setAttribute("aria-pressed", String(sides !== null && sides !== undefined && (button.dataset.sides === "off" ? "" : button.dataset.sides) === sides));
  });
}
// what became of an action: the clock's record of it, its refusal, or no answer (docs/hall.md)
function took(o) {
  if (!o) return "";
  if (o.state === "applied") return "applied (record " + o.seq + ")";
  if (o.state === "refused") return "REFUSED: " + o.reason;
  return o.state + (o.reason ? ": " + o.reason : "");
}
// an action on the audit trail in a director's words (its protocol fields stay in audit.log)
function actionWords(a) {
  const c = a.changed || {}, boards = Array.isArray(c.boards) ? " on boards " + c.boards.join(", ") : "";
  switch (a.action) {
    case "round_start": return "round " + c.round + " starts at " + c.start + boards;
    case "round_over": return "round over" + (c.round ? " (round " + c.round + ")" : "");
    case "new_game": return "new game" + boards;
    case "call": return "call " + c.call + ": " + (c.answer === "taken" ? "taken (on the way)" : "done");
    case "adjust": return "correction: " + c.side + " " + signed(c.delta_ms);
    case "late": return "late start: " + (c.absent === "both" ? "both players" : "player " + c.absent);
    case "reopen": return "game reopened";
    case "speech": return "speech: " + speechWords(c.speech === "off" ? "" : c.speech);
    case "large": return "large digits: " + largeWords(c.large === "off" ? "" : c.large);
    case "clear": return "retained state cleared";
    case "replay": return "a replay, refused (sent before and done once): " + c.path;
    case "moved": return "the dead clock told its game moved to clock " + c.to;
    case "late_records": return "the dead clock's late records: A " + signed(c.A_ms) + ", B " + signed(c.B_ms) + " used before the move, not counted (to clock " + c.to + ")";
    default: return a.action.replaceAll("_", " ") + " " + Object.entries(c).map(([k, v]) => k + " " + v).join(", ");
  }
}
async function history() {
  const answer = await fetch(base + "/history");
  if (!answer.ok) return;
  const data = await answer.json();
  document.getElementById("actions-on-file").replaceChildren(...data.actions.map(a => {
    const row = document.createElement("tr");
    const what = actionWords(a);
    const before = a.before ? "A " + a.before.A + ", B " + a.before.B : "";
    const command = (a.command || "").replace(/ by=\S+$/, "");  // its action id: the clock's record names it
    [a.at.replace("T", " "), a.by, a.addr || "", what, command, before, took(a.outcome)].forEach(v => cell(row, v));
    if (a.outcome && a.outcome.state === "refused") row.className = "refused";
    return row;
  }));
  document.getElementById("recorded").replaceChildren(...data.recorded.map(r => {
    const row = document.createElement("tr");
    [r.seq, clockTime(r.t_ms), r.what, r.source || "", r.by || "", r.A, r.B].forEach(v => cell(row, v));
    row.className = "ev-" + r.ev;  // prefixed, as in "Every record"
    return row;
  }));
}
// a game moved to a spare: where it went (the dead clock's board) or came from (the spare's), and on
// the spare's board a correction offered for the time the dead clock's late records add (the
// director's choice: sent only as any correction is, asked first and on the audit trail)
let lateShown = null;
function showMove(b) {
  const words = movedWords(b), note = document.getElementById("move-note");
  note.hidden = !words;
  document.getElementById("move-words").textContent = words;
  const late = b.took_over && b.took_over.late, key = late ? JSON.stringify(late) : null;
  if (key === lateShown) return;
  lateShown = key;
  document.getElementById("late-fix").replaceChildren(...(late ? "AB".split("").filter(side => Math.round(late[side + "_ms"] / 1000)).map(side => {
    const seconds = -Math.round(late[side + "_ms"] / 1000), button = document.createElement("button");
    button.textContent = side + " " + signed(seconds * 1000);
    button.onclick = () => send("/command", {action: "adjust", side: side, delta_s: String(seconds)},
      "Correct " + side + " by " + signed(seconds * 1000) + " on " + named() + " (the time the dead clock's late records show)?",
      button.textContent + " on " + named());
    return button;
  }) : []));
}
// This board's call, live: the hall's stream of every board, this one's banner from it (calls.js)
const banners = new CallBanners(document.getElementById("calls"), said => {
  document.getElementById("sent").textContent = said;
  setTimeout(history, 1500);
}, false);
let calling = null;  // this board's open call as last shown: its history is read again as it changes
new EventSource("/events").onmessage = event => {
  const boards = JSON.parse(event.data).boards, board = boards.find(b => b.clock === clock);
  banners.update(board ? [board] : [], Date.now() - (Number(event.lastEventId) || 0));
  if (board && board.health) {
    document.getElementById("health").replaceChildren(...healthFacts(board, usualVersion(boards)).flatMap(([name, value]) =>
      [Object.assign(document.createElement("dt"), {textContent: name}), Object.assign(document.createElement("dd"), {textContent: value})]));
  }
  if (board) { boardName = board.board; showSides("speech", board.speech, speechWords); showSides("large", board.large, largeWords); showMove(board); }
  if (board && loadedSeq !== null && board.seq !== null && board.seq !== loadedSeq) reload();
  const now = board && board.call ? board.call.seq + board.call.state : null;
  if (now !== calling) { calling = now; history(); }
};
setInterval(() => banners.tick(), 1000);  // the wait counts up between updates
history();
document.getElementById("clear").onclick = async () => {
  if (!await ask("Clear the retained state of " + named() + " (clock " + clock + ") on the broker? It publishes a new one with its next record.", "Clear " + named())) return;
  const answer = await fetch(base + "/clear", {method: "POST", headers: await commandHeaders()});
  document.getElementById("cleared").textContent = answer.ok ? "cleared" : await answer.text();
};
// a dead clock's game moved to a spare (docs/director-guide.md, "A spare clock"): the hall refuses a
// spare not online or in a game, and a game taken over already
document.getElementById("move").onclick = async () => {
  const spare = document.getElementById("spare").value.trim();
  if (!spare) return;
  if (!await ask("Move clock " + clock + "'s game to clock " + spare + "? The spare takes it up stopped, where the hall's copy of " +
                 clock + "'s records ends; the time " + clock + " was dead is not given back (use a correction).",
                 "Move to " + spare)) return;
  const answer = await fetch(base + "/move", {method: "POST", headers: await commandHeaders(), body: new URLSearchParams({to: spare})});
  document.getElementById("moved").textContent = answer.ok ? "sent: " + (await answer.json()).sent : await answer.text();
  setTimeout(history, 1500);
};
