"use strict";
// Calls to the director on the hall's pages (docs/hall.md, "Calls from the board"): a banner a
// calling board, with how long its call has waited and the answers. Each banner is kept by its
// clock and updated in place, never rebuilt: a redraw never loses a click, and a new call goes
// after the others. Nothing moves under the pointer: a banner whose call has closed stays where it
// was, greyed, its wait stopped and its buttons off, until the pointer is out of the banners (only then do the ones
// below move up); Taken stays in its place, off, once taken. Done asks first, naming the board, with
// its Yes away from where Done was (a double click never confirms). Each button names its board,
// and sends the answer to that board's clock for the call its banner shows (the page refuses an
// answer to a call no longer open, and says so). Needs session.js.
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
    this.shown = new Map();  // clock -> {banner, board, receivedAt, closed, asking}
    holder.addEventListener("pointerleave", () => this.collapse());
  }

  // The boards of a snapshot received at `receivedAt` (Date.now()): a banner for each calling one
  update(boards, receivedAt) {
    const calling = new Map(boards.filter(b => b.call).map(b => [b.clock, b]));
    for (const [clock, entry] of this.shown) {
      if (!calling.has(clock) && !entry.closed) this.close(entry);
    }
    for (const [clock, board] of calling) {
      let entry = this.shown.get(clock);
      if (!entry) {
        entry = {banner: this.make(clock)};
        this.shown.set(clock, entry);
        this.holder.append(entry.banner);
      }
      Object.assign(entry, {board, receivedAt, closed: false});
      this.fill(entry);
    }
    this.collapse();
  }

  // The closed calls' banners go, once the pointer is not over the banners (never under it)
  collapse() {
    if (this.holder.matches(":hover")) return;
    for (const [clock, entry] of this.shown) {
      if (entry.closed) {
        entry.banner.remove();
        this.shown.delete(clock);
      }
    }
  }

  close(entry) {
    entry.closed = true;  // a question asked stays in sight, off: nothing shrinks under the pointer
    entry.banner.className = "call closed";  // greyed; its words kept, so none moves a button
    for (const button of entry.banner.querySelectorAll("button")) button.disabled = true;
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
    done.onclick = () => { const entry = this.shown.get(clock); if (entry && !entry.closed) this.ask(entry, entry.board.call.seq); };
    banner.append(take, done);
    // Done's question, at the banner's end: its Yes is never where Done or Taken was. Its room is
    // always kept (only unseen when not asked), so asking or not moves nothing
    const confirm = document.createElement("span"), yes = document.createElement("button"), no = document.createElement("button");
    confirm.className = "confirm off";
    yes.className = "yes";
    no.className = "no";
    no.textContent = "Cancel";
    yes.onclick = () => {
      const entry = this.shown.get(clock);
      if (!entry || entry.asking == null) return;
      yes.disabled = no.disabled = true;  // sent: the question stays, off, until the call closes
      this.answer(clock, "done", entry.asking).then(ok => { if (!ok) this.ask(entry, null); });
    };
    no.onclick = () => { const entry = this.shown.get(clock); if (entry) this.ask(entry, null); };
    confirm.append(document.createElement("span"), yes, no);
    if (this.history) banner.append(Object.assign(document.createElement("a"), {href: "/board/" + encodeURIComponent(clock), textContent: "history"}));
    banner.append(confirm);
    return banner;
  }

  // Done's question for call `seq` shown (or, with null, unseen: its room stays)
  ask(entry, seq) {
    entry.asking = seq;
    const confirm = entry.banner.querySelector(".confirm");
    confirm.classList.toggle("off", seq == null);
    for (const button of confirm.querySelectorAll("button")) button.disabled = seq == null;
  }

  fill(entry) {
    const b = entry.board, banner = entry.banner, taken = b.call.state === "taken", name = "Board " + b.board;
    const className = "call " + b.call.state;
    if (banner.className !== className) banner.className = className;
    if (entry.asking != null && entry.asking !== b.call.seq) this.ask(entry, null);  // asked of another call
    banner.dataset.seq = b.call.seq;
    const where = name + (b.table ? " · table " + b.table : "") + (b.round ? " · round " + b.round : "");
    callSet(banner.querySelector(".what"), (taken ? "Taken: " : "CALL: ") + where);
    callSet(banner.querySelector(".players"), b.players || "");
    callSet(banner.querySelector(".clock-state"),
      "clock " + (CALL_STATE_WORDS[b.state] || "?") + ", A " + b.A.shown + ", B " + b.B.shown);
    const take = banner.querySelector("button.take"), done = banner.querySelector("button.done");
    callSet(take, "Taken — " + name);
    take.disabled = taken;  // kept in its place: Done never slides under the pointer
    callSet(done, "Done — " + name);
    done.disabled = false;
    const confirm = banner.querySelector(".confirm");
    callSet(confirm.firstChild, name + "'s call is done? ");
    callSet(confirm.querySelector("button.yes"), "Yes, done — " + name);
    this.tickOne(entry);
  }

  // The waits count up between updates (the page calls this every second)
  tick() {
    for (const entry of this.shown.values()) this.tickOne(entry);
  }

  tickOne(entry) {
    if (entry.closed) return;
    const ms = entry.board.call.waited_ms + (Date.now() - entry.receivedAt);
    callSet(entry.banner.querySelector(".waited"), "waiting " + callWait(ms));
  }

  async answer(clock, answer, seq) {
    const entry = this.shown.get(clock);
    if (!entry || entry.closed) return;
    const call = seq == null ? entry.board.call.seq : seq;
    const reply = await fetch("/api/board/" + encodeURIComponent(clock) + "/call", {
      method: "POST", headers: await commandHeaders(), body: new URLSearchParams({call, answer})});
    this.said(reply.ok ? "sent: " + (await reply.json()).sent : await reply.text());
    return reply.ok;
  }
}
