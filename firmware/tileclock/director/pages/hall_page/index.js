"use strict";
let snapshot = null, receivedAt = 0;

function seconds(shown) {
  const negative = shown.startsWith("-"), parts = shown.replace("-", "").split(":");
  const value = Number(parts[0]) * 60 + Number(parts[1]);
  return negative ? -value : value;
}
function format(value) {
  const sign = value < 0 ? "-" : "", abs = Math.abs(value);
  return sign + Math.floor(abs / 60) + ":" + String(abs % 60).padStart(2, "0");
}
function plural(n, one, many) { return n + " " + (n === 1 ? one : (many || one + "s")); }
// The running side's display, ticking: whole seconds used since the record, as the clock counts them.
function liveShown(board, side) {
  const s = board[side];
  if (!board.online || board.run !== side || board.age_ms === null || !/^-?\d+:\d\d$/.test(s.shown)) return s.shown;
  const elapsed = board.age_ms + (Date.now() - receivedAt);
  const steps = Math.floor((s.used_ms + elapsed) / 1000) - Math.floor(s.used_ms / 1000);
  return format(seconds(s.shown) - steps);
}
function overtime(board) {
  return board.state !== "ended" && ["A", "B"].some(side => liveShown(board, side).startsWith("-"));
}
// What the director sees first of a board: one word (the panels' own STOPPED for a stopped
// clock), its class, and the group it is listed in. `calling` is the call's (issue 30, point 1).
// the summary's order: what needs the director first
const ORDER = ["CALLING", "SILENT", "FAULT", "RECORDS MISSING", "OVERTIME", "STOPPED", "PLAYING", "READY", "ENDED", "NO GAME YET"];
const PLAY_WORDS = {ready: "READY", running: "PLAYING", paused: "STOPPED", ended: "ENDED"};
function status(board) {
  if (board.call) return {key: "calling", word: "CALLING", group: "now"};
  if (!board.online) return {key: "silent", word: "SILENT", group: "now"};
  if (Object.keys(board.faults).length) return {key: "fault", word: "FAULT", group: "now"};
  if (board.waiting) return {key: "missing", word: "RECORDS MISSING", group: "now"};
  if (overtime(board)) return {key: "overtime", word: "OVERTIME", group: "soon"};
  if (board.state === "paused") return {key: "stopped", word: "STOPPED", group: "soon"};
  if (board.state === "running") return {key: "playing", word: "PLAYING", group: "play"};
  if (board.state === "ready") return {key: "ready", word: "READY", group: "rest"};
  if (board.state === "ended") return {key: "ended", word: "ENDED", group: "rest"};
  return {key: "none", word: "NO GAME YET", group: "rest"};
}
function text(tag, cls, value) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  node.textContent = value;
  return node;
}
function ago(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s";
}
function card(b) {
  const st = status(b);
  const node = document.createElement("a");
  node.className = "board s-" + st.key;
  node.href = "/board/" + encodeURIComponent(b.clock);
  node.dataset.clock = b.clock;
  node.dataset.status = st.key;
  const head = document.createElement("div");
  head.className = "head";
  const where = [b.round ? "round " + b.round : "", b.table && String(b.table) !== String(b.board) ? "table " + b.table : ""];
  head.append(text("span", "name", "Board " + b.board), text("span", "where", where.filter(Boolean).join(" · ")));
  const words = [st.word];
  if (b.call && b.call.state === "taken") words.push("TD COMING");
  if (st.group === "now" && PLAY_WORDS[b.state]) words.push((b.online ? "" : "last seen ") + PLAY_WORDS[b.state]);
  if (st.key === "overtime" && b.state === "paused") words.push("STOPPED");
  if (b.run && b.state === "running" && b.online) words.push(b.run + "'s turn");
  const sides = document.createElement("div");
  sides.className = "sides";
  for (const side of ["A", "B"]) {
    const shown = liveShown(b, side), turn = b.run === side && b.state === "running" && b.online;
    const box = document.createElement("div");
    box.className = "side" + (turn ? " turn" : "") + (shown.startsWith("-") ? " over" : "");
    box.dataset.side = side;
    box.append(text("span", "label", (turn ? "▶ " + side + " to play" : side) + (shown.startsWith("-") ? " · overtime" : "")));
    box.append(text("span", "time", shown));
    if (b[side].pen) box.append(text("span", "pen", "−" + b[side].pen + " pts"));
    sides.append(box);
  }
  node.append(head, text("div", "badge", words.join(" · ")), sides);
  const faults = Object.entries(b.faults).map(([part, why]) => part + ": " + why).join("; ");
  if (faults) node.append(text("div", "faults", faults));
  if (b.in_the_clear) node.append(text("div", "time-off", "no TLS: its password and commands in the clear"));
  if (!b.online) node.append(text("div", "heard", b.age_ms === null ? "never heard from" :
    "its clock went silent; last record " + ago(b.age_ms + Date.now() - receivedAt) + " ago"));
  if (b.waiting) node.append(text("div", "heard", "waiting for " + plural(b.waiting, "record") + " (asked again)"));
  if (b.latest_end_ms || b.likely_end_ms) node.append(text("div", "heard ends", boardEnds(b) +
    (b.state === "paused" ? " (later, while its clock is not running)" : "")));
  const off = timeOff(b);
  if (off) node.append(text("div", "time-off", off));
  if (powerWords(b) === "power supply too weak") node.append(text("div", "faults power", "Board " + b.board + ": power supply too weak"));
  const moved = movedWords(b);
  if (moved) node.append(text("div", "heard moved", moved));
  return node;
}
// A clock whose wall clock is not within TIME_MS of this laptop's starts a timed round that far off.
const TIME_MS = 10;
function timeOff(b) {
  const t = b.time;
  if (!t || !b.online) return "";
  if (!t.synced) return "its clock's time is not synchronised with this laptop: a timed round may start off";
  const off = (Math.abs(t.offset_us) + t.error_us) / 1000;
  return off > TIME_MS ? "its clock's time is " + (t.offset_us / 1000).toFixed(1) + " ms off this laptop's" : "";
}
function drawTime(boards) {
  const told = boards.filter(b => b.time), worst = Math.max(0, ...told.filter(b => b.time.synced).map(b => (Math.abs(b.time.offset_us) + b.time.error_us) / 1000));
  const unsynced = told.filter(b => !b.time.synced).map(b => "Board " + b.board), silent = boards.length - told.length;
  let said = told.length ? "Clock times: " + plural(told.length - unsynced.length, "clock") + " within " + worst.toFixed(worst < 1 ? 3 : 1) + " ms of this laptop" : "";
  const far = told.filter(b => b.time.synced && (Math.abs(b.time.offset_us) + b.time.error_us) / 1000 > TIME_MS);
  if (far.length) said += " (over " + TIME_MS + " ms: " + far.map(b => "Board " + b.board).join(", ") + ")";
  if (unsynced.length) said += "; not synchronised: " + unsynced.join(", ");
  const dumb = boards.filter(b => !b.time).map(b => "Board " + b.board);
  if (silent) said += (said ? "; " : "Clock times: ") + "sends no time figures: " + dumb.join(", ");
  document.getElementById("time-status").textContent = said;
}
let round = null;
// boards in their natural order: 2 before 10 (as the hall sorts them, board.py's board_order)
function byBoard(a, b) {
  const na = /^\d{1,19}$/.test(String(a.board)), nb = /^\d{1,19}$/.test(String(b.board));
  if (na && nb) return Number(a.board) - Number(b.board) || (a.clock < b.clock ? -1 : 1);
  if (na !== nb) return na ? -1 : 1;
  return String(a.board) < String(b.board) ? -1 : String(a.board) > String(b.board) ? 1 : (a.clock < b.clock ? -1 : 1);
}
// where a board of the round is: silent, called, not started, playing (stopped, in overtime), ended
// this round (its game ended, or it has opened its next game since)
function roundKey(b, answers) {
  if (!b.online) return "silent";
  if (b.call) return "called";
  if (b.took_start === round.start_ms) {
    if (b.state === "ended") return "ended";
    if (b.state === "ready" || !b.state) return "not started";
    return overtime(b) ? "in overtime" : b.state === "paused" ? "stopped" : "playing";
  }
  // its game took no start of this round: one opened after the round's game ended, or it never took the start
  return answers[b.clock] === "applied" ? "ended" : "not started";
}
const ROUND_KEYS = ["silent", "not started", "called", "in overtime", "stopped", "playing", "ended"];
function drawRound(boards) {
  const holder = document.getElementById("round-status");
  drawAnswers(snapshot.several);
  drawBefore(snapshot.before_round);
  if (!round) return;
  const answers = snapshot.round_answers || {};
  const mine = boards.filter(b => round.clocks.includes(b.clock)).sort(byBoard), groups = {};
  const name = b => "Board " + b.board;
  for (const b of mine) {
    const key = roundKey(b, answers);
    (groups[key] = groups[key] || []).push(b);
  }
  const parts = ROUND_KEYS.filter(k => groups[k]).map(k =>
    groups[k].length + " " + k + (k === "playing" || k === "stopped" ? "" : " (" + groups[k].map(name).join(", ") + ")"));
  holder.replaceChildren(text("b", "", "Round " + round.round + (round.over_ms ? ", round over sent" : ", from " + round.start) +
    " on " + plural(round.boards.length, "board") + ": "), text("span", "", parts.join(" · ") || "no board heard from"));
  const ends = document.getElementById("round-ends"), said = round.over_ms ? "" : roundEnds(round, mine);
  ends.hidden = !said;
  ends.textContent = said;
}
// the time of day on this laptop, 15:42
function dayTime(ms) { return new Date(ms).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", hour12: false}); }
// "ends by 15:42 at the latest, likely 15:20" (either known alone: "likely ends at 15:20")
function endsWords(latest, likely) {
  if (!latest) return "likely ends at " + dayTime(likely);
  return "ends by " + dayTime(latest) + " at the latest" + (likely ? ", likely " + dayTime(likely) : "");
}
// when a board's game ends at the latest and likely, from its pace (hall/ends.py)
function boardEnds(b) { return endsWords(b.latest_end_ms, b.likely_end_ms); }
// when the round ends at the latest and likely: the last of its boards still in play (hall/ends.py),
// and which are likely last (those within a minute of the last likely end; by the latest end if no
// board has a likely one)
function roundEnds(round, mine) {
  const timed = mine.filter(b => b.latest_end_ms || b.likely_end_ms);
  const open = mine.filter(b => !b.latest_end_ms && b.state && b.state !== "ended");
  if (!timed.length) return "";
  const byLatest = timed.filter(b => b.latest_end_ms), paced = timed.filter(b => b.likely_end_ms);
  const latest = byLatest.length ? Math.max(...byLatest.map(b => b.latest_end_ms)) : null;
  const likely = paced.length ? Math.max(...paced.map(b => b.likely_end_ms)) : null;
  const lastBoards = (likely ? paced.filter(b => b.likely_end_ms >= likely - 60000) : byLatest.filter(b => b.latest_end_ms >= latest - 60000))
    .sort(byBoard).slice(0, 5).map(b => "Board " + b.board);
  let said = "Round " + round.round + " " + endsWords(latest, likely) + ": " + lastBoards.join(", ") + " will be last";
  const stopped = timed.filter(b => b.state === "paused").map(b => "Board " + b.board);
  if (stopped.length) said += "; later while stopped: " + stopped.join(", ");
  if (open.length) said += "; no latest end known for " + open.sort(byBoard).map(b => "Board " + b.board).join(", ");
  return said;
}
// what each board did with the newest command to several boards, as each answer comes
const ANSWER_ORDER = ["refused", "not delivered", "offline", "no answer yet", "applied"];
function answerWords(a) {
  if (a.state === "refused") return "REFUSED: " + a.reason;
  return a.state + (a.state === "not delivered" && a.reason ? ": " + a.reason : "");
}
function drawAnswers(several) {
  const holder = document.getElementById("answers"), banner = document.getElementById("round-refused");
  holder.hidden = !several;
  if (!several) { banner.hidden = true; return; }
  const counts = ANSWER_ORDER.filter(k => several.counts[k]).map(k => several.counts[k] + " " + k);
  const head = text("p", "answers-head", several.what + ": " + (counts.join(" · ") || "no board"));
  const list = document.createElement("ul");
  for (const a of several.boards) {
    const item = text("li", "answer a-" + a.state.replaceAll(" ", "-"), "Board " + a.board + ": " + answerWords(a));
    item.dataset.clock = a.clock;
    item.dataset.state = a.state;
    list.append(item);
  }
  holder.replaceChildren(head, list);
  const refused = several.boards.filter(a => a.state === "refused");
  banner.hidden = !(several.action === "round_start" && refused.length);
  if (banner.hidden) return;
  const reasons = {};
  refused.forEach(a => (reasons[a.reason] = reasons[a.reason] || []).push("Board " + a.board));
  const said = Object.entries(reasons).map(([why, names]) => names.join(", ") + ": " + why).join("; ");
  const fix = several.fixes.length ? " Fix: " + several.fixes.join("; ") + "." : "";
  banner.querySelector(".what").textContent = "Round " + several.round + " did NOT start on " +
    plural(refused.length, "board") + " (" + said + ")." + fix;
  banner.dataset.boards = refused.map(a => a.board).join(", ");
}
// before a round: the boards that cannot start a timed round as they are
function drawBefore(before) {
  const holder = document.getElementById("before-round");
  const idle = !round || round.over_ms;
  const cannot = before ? before.cannot : [];
  holder.hidden = !(idle && cannot.length);
  if (holder.hidden) return;
  const reasons = {};  // the boards of each reason together: 200 boards are one line, not a page
  cannot.forEach(c => (reasons[c.why] = reasons[c.why] || []).push(c.board));
  holder.textContent = "Cannot start a timed round now: " +
    Object.entries(reasons).map(([why, names]) => boardRuns(names) + " (" + why + ")").join(", ");
}
// boards in board order as a director types them: "Board 5", "Boards 1-8, 11, 12b"
function boardRuns(names) {
  const runs = [];
  for (const name of names) {
    const n = /^\d{1,9}$/.test(name) ? Number(name) : null, last = runs[runs.length - 1];
    if (n !== null && last && last.to === n - 1) last.to = n;
    else runs.push(n === null ? {name} : {from: n, to: n});
  }
  const said = runs.map(r => r.name !== undefined ? r.name : r.from === r.to ? String(r.from) : r.from + "-" + r.to);
  return (names.length === 1 ? "Board " : "Boards ") + said.join(", ");
}
async function loadRound() {
  const answer = await fetch("/api/round");
  const data = answer.ok ? await answer.json() : {};
  round = data.round || null;
  // a saved round the hall could not take up (kept aside): said where the round would be
  if (!round && data.problem) document.getElementById("round-status").textContent = data.problem;
  const input = document.getElementById("round");
  // the round under way; once it is over, the next: TSH's next unscored one, at least one past it
  if (round && !round.over_ms) input.value = round.round;
  else if (round) input.value = Math.max(data.next || 0, round.round + 1);
  else if (data.next && input.value === input.defaultValue) input.value = data.next;  // TSH's next round
  draw();
}
function draw() {
  if (!snapshot) return;
  drawRound(snapshot.boards);
  drawTime(snapshot.boards);
  if (mapShown) drawMap(snapshot.boards);
  const boards = snapshot.boards, groups = {now: [], soon: [], play: [], rest: []};
  const counts = Object.fromEntries(ORDER.map(word => [word, 0]));
  boards.forEach(b => {
    const st = status(b);
    counts[st.word] = (counts[st.word] || 0) + 1;
    groups[st.group].push(card(b));
  });
  document.getElementById("summary").textContent = plural(boards.length, "board") + (boards.length ? ": " : "") +
    Object.entries(counts).filter(([, n]) => n).map(([w, n]) => n + " " + w).join(", ");
  const link = document.getElementById("link");
  const alerts = (snapshot.connected ? [] : ["broker: " + (snapshot.down || "down")]).concat(snapshot.alerts || [])
    .concat(snapshot.in_the_clear ? [snapshot.in_the_clear] : []);  // no TLS to the broker: said always
  link.textContent = alerts.join(" · ");
  link.className = alerts.length ? "down" : "";
  for (const [name, cards] of Object.entries(groups)) {
    const section = document.getElementById("g-" + name);
    section.hidden = !cards.length;
    section.querySelector("h2").dataset.count = cards.length;
    const holder = section.querySelector(".cards"), had = {};
    for (const node of holder.children) had[node.dataset.clock] = node;
    // a card that did not change stays the same node: a click or a focus on it is never lost
    holder.replaceChildren(...cards.map(node => {
      const old = had[node.dataset.clock];
      return old && old.className === node.className && old.innerHTML === node.innerHTML ? old : node;
    }));
  }
}
// every clock that says its health, a row each; a version other than most clocks' is flagged
function drawFleet(boards) {
  const told = boards.filter(b => b.health), usual = usualVersion(told);
  document.getElementById("fleet").hidden = !told.length;
  document.getElementById("fleet-rows").replaceChildren(...told.map(b => {
    const row = document.createElement("tr");
    row.dataset.clock = b.clock;
    [["board", b.board], ["clock", b.clock], ...healthFacts(b, usual)].forEach(([name, value]) => {
      const td = text("td", "", value);
      td.dataset.name = name;
      if ((name === "version" && b.health.v !== usual) || (name === "power" && value === "power supply too weak")
          || (name === "self-test" && value.startsWith("failed"))) td.className = "odd";
      row.append(td);
    });
    return row;
  }));
}
// `aged`: how old the snapshot already was when it came (its event's id, live.py): a page opened
// later counts from when it was taken, never from when it arrived
function take(data, aged) { snapshot = data; receivedAt = Date.now() - (aged || 0); draw(); drawCalls(); drawFleet(data.boards); }
setInterval(draw, 250);  // the running clocks tick between updates
async function post(path, body, question, yes) {
  if (!await ask(question, yes)) return;
  const answer = await fetch(path, {method: "POST", headers: await commandHeaders(), body: new URLSearchParams(body)});
  if (answer.ok) {
    const done = await answer.json();
    document.getElementById("sent").textContent = "sent: " + done.sent;
    round = done.round || round;
    if (round && round.over_ms) loadRound();  // round over: the Start box offers the next round
    draw();
  } else document.getElementById("sent").textContent = await answer.text();
}
loadRound();
loadPlan();
showView();
document.getElementById("view").onclick = () => {
  mapShown = !mapShown;
  localStorage.setItem("tileclock-view", mapShown ? "map" : "list");
  showView();
  draw();
};
document.getElementById("start-round").onclick = () => {
  const number = document.getElementById("round").value, start = document.getElementById("start-at").value.trim();
  const boards = document.getElementById("boards").value.trim();
  post("/api/round/start", {round: number, start, boards},
       "Start round " + number + (start ? " at " + start : " in 10 s") + " on " + (boards ? "boards " + boards : "every board") + "?",
       "Start round " + number);
};
document.getElementById("end-round").onclick = () =>
  post("/api/round/over", {}, "End the round? Every clock stops now.", "End the round");
document.getElementById("selftest-all").onclick = () =>
  post("/api/selftest", {}, "Self-test every board? Only boards on a fresh game take it; the panels ask for each button.", "Self-test");
function newGames(boards) {
  post("/api/round/new-game", {boards},
       "New game on " + (boards ? "boards " + boards : "every board") + "? A board whose game has not ended refuses it.",
       "New game on " + (boards ? "boards " + boards : "every board"));
}
document.getElementById("new-games").onclick = () => newGames(document.getElementById("boards").value.trim());
document.getElementById("new-games-refused").onclick = () => newGames(document.getElementById("round-refused").dataset.boards);
// Calls to the director: a banner a calling board (calls.js), a sound for each new call, and mute.
const banners = new CallBanners(document.getElementById("calls"), said => { document.getElementById("sent").textContent = said; });
let muted = localStorage.getItem("tileclock-muted") === "1", heard = new Set(), audio = null, lastRing = 0;
const muteButton = document.getElementById("mute");
// the state is said where a call shows: a muted page never looks as if it would ring
function showMute() {
  muteButton.textContent = muted ? "Sound is off" : "Sound is on";  // a state, never read as an action
  muteButton.title = muted ? "click to turn the calls' sound on" : "click to mute the calls' sound";
  muteButton.setAttribute("aria-pressed", String(muted));
  muteButton.classList.toggle("muted", muted);
  document.getElementById("sound-off").hidden = !(muted && banners.shown.size);
}
function setMuted(value) { muted = value; localStorage.setItem("tileclock-muted", muted ? "1" : "0"); showMute(); }
muteButton.onclick = () => setMuted(!muted);
document.getElementById("unmute").onclick = () => setMuted(false);
function ring() {
  // two short tones; a browser lets a page sound only after a click on it (the mute button will do)
  if (muted) return;
  try {
    audio = audio || new AudioContext();
    for (const [at, pitch] of [[0, 880], [0.25, 660]]) {
      const tone = audio.createOscillator(), gain = audio.createGain();
      tone.frequency.value = pitch; gain.gain.value = 0.2;
      tone.connect(gain).connect(audio.destination);
      tone.start(audio.currentTime + at); tone.stop(audio.currentTime + at + 0.2);
    }
  } catch (error) { /* no sound here: the banner still shows */ }
  window.rang = (window.rang || 0) + 1;
}
// a new call rings at once, and a call not yet taken again every 30 s (with no update meanwhile too)
function ringIfDue() {
  const calling = snapshot ? snapshot.boards.filter(b => b.call) : [];
  const fresh = calling.filter(b => !heard.has(b.clock + "/" + b.call.seq));
  calling.forEach(b => heard.add(b.clock + "/" + b.call.seq));
  const waiting = calling.some(b => b.call.state === "called");
  if (fresh.length || (waiting && Date.now() - lastRing >= 30000)) { ring(); lastRing = Date.now(); }
}
function drawCalls() {
  if (!snapshot) return;
  banners.update(snapshot.boards, receivedAt);
  ringIfDue();
  showMute();
}
showMute();
setInterval(() => { banners.tick(); ringIfDue(); }, 1000);  // the waits count up between updates
// the hall's updates, once every script above is in place
new EventSource("/events").onmessage = event => take(JSON.parse(event.data), Number(event.lastEventId) || 0);
