"use strict";
// Calls to the director on the hall's pages (docs/hall.md, "Calls from the board"): a banner a
// calling board, with how long its call has waited and the answers. Each banner is kept by its
// clock and updated in place, never rebuilt: a redraw never loses a click, and a new call goes
// after the others, so no banner moves under the pointer for another board's to take its place.
// Each button names its board, and sends the answer to that board's clock for the call its banner
// shows (the page refuses an answer to a call no longer open, and says so). Needs session.js.
const CALL_STATE_WORDS = {ready: "not started", running: "playing", paused: "STOPPED", ended: "ended"};

function callWait(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

function callSet(node, value) {
  if (node.textContent !== value) node.textContent = value;  // untouched when unchanged: a selection stays
}

class CallBanners {
  // `holder`: the element the banners go in; `said(text)`: what became of an answer; `history`:
  // whether a banner links to its board's page (not on that page itself)
  constructor(holder, said, history = true) {
    this.holder = holder;
    this.said = said;
    this.history = history;
    this.shown = new Map();  // clock -> {banner, board, receivedAt}
  }

  // The boards of a snapshot received at `receivedAt` (Date.now()): a banner for each calling one
  update(boards, receivedAt) {
    const calling = new Map(boards.filter(b => b.call).map(b => [b.clock, b]));
    for (const [clock, entry] of this.shown) {
      if (!calling.has(clock)) {
        entry.banner.remove();
        this.shown.delete(clock);
      }
    }
    for (const [clock, board] of calling) {
      let entry = this.shown.get(clock);
      if (!entry) {
        entry = {banner: this.make(clock)};
        this.shown.set(clock, entry);
        this.holder.append(entry.banner);
      }
      Object.assign(entry, {board, receivedAt});
      this.fill(entry);
    }
  }

  make(clock) {
    const banner = document.createElement("div");
    banner.dataset.clock = clock;
    for (const [tag, cls] of [["strong", "what"], ["span", "players"], ["span", "clock-state"], ["span", "waited"]]) {
      const node = document.createElement(tag);
      node.className = cls;
      banner.append(node);
    }
    banner.querySelector(".waited").setAttribute("aria-live", "off");  // a tick a second is no news
    const take = document.createElement("button"), done = document.createElement("button");
    take.className = "take";
    done.className = "done";
    take.onclick = () => this.answer(clock, "taken");
    done.onclick = () => this.answer(clock, "done");
    banner.append(take, done);
    if (this.history) banner.append(Object.assign(document.createElement("a"), {href: "/board/" + encodeURIComponent(clock), textContent: "history"}));
    return banner;
  }

  fill(entry) {
    const b = entry.board, banner = entry.banner, taken = b.call.state === "taken", name = "Board " + b.board;
    const className = "call " + b.call.state;
    if (banner.className !== className) banner.className = className;
    banner.dataset.seq = b.call.seq;
    const where = name + (b.table ? " · table " + b.table : "") + (b.round ? " · round " + b.round : "");
    callSet(banner.querySelector(".what"), (taken ? "Taken: " : "CALL: ") + where);
    callSet(banner.querySelector(".players"), b.players || "");
    callSet(banner.querySelector(".clock-state"),
      "clock " + (CALL_STATE_WORDS[b.state] || "?") + ", A " + b.A.shown + ", B " + b.B.shown);
    const take = banner.querySelector("button.take");
    callSet(take, "Taken — " + name);
    take.hidden = taken;
    callSet(banner.querySelector("button.done"), "Done — " + name);
    this.tickOne(entry);
  }

  // The waits count up between updates (the page calls this every second)
  tick() {
    for (const entry of this.shown.values()) this.tickOne(entry);
  }

  tickOne(entry) {
    const ms = entry.board.call.waited_ms + (Date.now() - entry.receivedAt);
    callSet(entry.banner.querySelector(".waited"), "waiting " + callWait(ms));
  }

  async answer(clock, answer) {
    const entry = this.shown.get(clock);
    if (!entry) return;
    const reply = await fetch("/api/board/" + encodeURIComponent(clock) + "/call", {
      method: "POST", headers: commandHeaders(), body: new URLSearchParams({call: entry.board.call.seq, answer})});
    this.said(reply.ok ? "sent: " + (await reply.json()).sent : await reply.text());
  }
}
