// The spectators' count (docs/hall.md, "Spectators"): pure functions, no network, no page.
// A public state carries each side's time left at its own instant `at_ms` (the clock's time of
// day); between two states only the time of a side that runs moves, so a viewer shows
// left_ms - (now - at_ms) and never drifts from the clock. Tested in Chromium
// (tests/test_viewers_pages.py) and measured over a 25-minute game (docs/hall.md).
"use strict";
var TileclockCount = (function () {
  var SIDES = ["A", "B"];
  var STATES = ["ready", "running", "paused", "ended"];
  var SHOWN = /^-?\d{1,4}:\d\d$/;
  var LABEL = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
  var BOOT = /^[A-Za-z0-9-]{1,64}$/; // the kernel's boot id (a uuid), or the simulator's
  // a skew estimate smaller than this is delivery time, not a wrong clock: the stamp is trusted
  var SYNCED_MS = 1000;
  // how many live states' delays the skew estimate takes the least of
  var SAMPLES = 8;

  function whole(value, low, high) {
    return typeof value === "number" && Number.isSafeInteger(value) && value >= low && value <= high;
  }

  // The state in `text` if it has the public state's shape, else null (anyone's bytes: checked).
  function parse(text) {
    if (typeof text !== "string" || text.length > 4096) return null;
    var value;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return null;
    }
    if (!value || typeof value !== "object" || value.v !== 2) return null;
    if (typeof value.clock !== "string" || !LABEL.test(value.clock)) return null;
    if (STATES.indexOf(value.state) < 0 || [null, "A", "B"].indexOf(value.run) < 0) return null;
    if (!whole(value.seq, 0, Number.MAX_SAFE_INTEGER) || !whole(value.at_ms, 0, 1e14)) return null;
    if (value.cap_s !== null && !whole(value.cap_s, 0, 86400)) return null;
    // the rules' round limit: said by newer clocks only (absent: null)
    var limit = value.limit_s === undefined ? null : value.limit_s;
    if (limit !== null && !whole(limit, 1, 86400)) return null;
    var board = value.board, table = value.table, round = value.round;
    if (board !== null && !(typeof board === "string" && LABEL.test(board))) return null;
    if (table !== null && !whole(table, 0, 9999) && !(typeof table === "string" && LABEL.test(table))) return null;
    if (round !== null && !whole(round, 0, 9999)) return null;
    // the boot its newest record was made in (absent from a clock before it was said: null)
    var boot = value.boot === undefined ? null : value.boot;
    if (boot !== null && !(typeof boot === "string" && BOOT.test(boot))) return null;
    // the board's call to the director, the round's start and why the game ended: said by newer
    // clocks only (absent: null), each held to what it may be
    var call = value.call === undefined ? null : value.call;
    var start = value.start_ms === undefined ? null : value.start_ms;
    var ended = value.ended === undefined ? null : value.ended;
    if ([null, "called", "taken"].indexOf(call) < 0) return null;
    if (start !== null && !whole(start, 0, 1e14)) return null;
    if ([null, "round_over", "stop_hold", "forfeit"].indexOf(ended) < 0) return null;
    var state = {
      clock: value.clock, board: board, table: table, round: round, seq: value.seq, boot: boot,
      state: value.state, run: value.run, at_ms: value.at_ms, cap_s: value.cap_s, limit_s: limit,
      call: call, start_ms: start, ended: ended,
    };
    for (var i = 0; i < 2; i++) {
      var side = value[SIDES[i]];
      if (!side || !whole(side.left_ms, -1e9, 1e9) || !whole(side.pen, 0, 1e6)) return null;
      if (typeof side.shown !== "string" || !SHOWN.test(side.shown)) return null;
      if (typeof side.runs !== "boolean") return null;
      // its time used at `at_ms`: said by newer clocks only (absent: null, and no likely end)
      var used = side.used_ms === undefined ? null : side.used_ms;
      if (used !== null && !whole(used, 0, 1e9)) return null;
      state[SIDES[i]] = { left_ms: side.left_ms, shown: side.shown, pen: side.pen, runs: side.runs, used_ms: used };
    }
    state.pace = null;  // the game's pace (clock/pace.py): said by newer clocks only
    if (value.pace !== undefined && value.pace !== null) {
      var pace = {};
      for (var j = 0; j < 2; j++) {
        var done = value.pace && value.pace[SIDES[j]];
        if (!done || !whole(done.turns, 0, 1e6) || !whole(done.used_ms, 0, 1e9) || !whole(done.base_ms, 0, 1e9)
            || (done.last !== 0 && done.last !== 1)) return null;
        pace[SIDES[j]] = { turns: done.turns, used_ms: done.used_ms, base_ms: done.base_ms, last: done.last === 1 };
      }
      state.pace = pace;
    }
    return state;
  }

  // Whether `side`'s time runs in `state`, as the clock says (its `runs`): never guessed from
  // `run`, which is null both when both absent sides run and when neither does (school rules).
  function charged(state, side) {
    return state.state === "running" && state[side].runs === true;
  }

  // `side`'s time left (ms) at the viewer's `now_ms`, its clock `skew_ms` ahead of the clock's.
  function leftAt(state, side, now_ms, skew_ms) {
    var left = state[side].left_ms;
    if (!charged(state, side)) return left;
    return left - Math.max(0, now_ms - (skew_ms || 0) - state.at_ms);
  }

  // The whole seconds a display shows for `left_ms` (the clock's panels: the ceiling), never
  // past the overtime cap.
  function shownSeconds(left_ms, cap_s) {
    var seconds = Math.ceil(left_ms / 1000);
    if (cap_s !== null && cap_s !== undefined) seconds = Math.max(seconds, -(cap_s + 1));
    return seconds === 0 ? 0 : seconds; // never -0
  }

  // 1500 -> "25:00", -61 -> "-1:01", as the clock's panels write it.
  function format(seconds) {
    var sign = seconds < 0 ? "-" : "";
    var whole_s = Math.abs(seconds);
    var rest = whole_s % 60;
    return sign + Math.floor(whole_s / 60) + ":" + (rest < 10 ? "0" : "") + rest;
  }

  // What `side` shows at `now_ms`: the clock's own text while its time stands, the count while it runs.
  function shown(state, side, now_ms, skew_ms) {
    if (!charged(state, side)) return state[side].shown;
    return format(shownSeconds(leftAt(state, side, now_ms, skew_ms), state.cap_s));
  }

  // When `state`'s game ends at the latest (ms, the viewer's clock), as the director's page says it
  // (hall/ends.py): both sides' time left at `now_ms` plus what is left of each side's overtime cap,
  // from now (a stopped clock is counted as stopped: its end moves later while it stays so); under
  // a round limit (school rule 21) by the round's start plus the limit, at the latest (on the
  // viewer's clock: the start is the clock's time of day); null when not in play or with neither.
  function latestEnd(state, now_ms, skew_ms) {
    if (["ready", "running", "paused"].indexOf(state.state) < 0) return null;
    var ends = [];
    if (state.cap_s !== null) {
      var to_come = 0;
      for (var i = 0; i < 2; i++) {
        var left = leftAt(state, SIDES[i], now_ms, skew_ms);
        to_come += Math.max(0, left) + Math.max(0, state.cap_s * 1000 - Math.max(0, -left));
      }
      ends.push(now_ms + to_come);
    }
    if (state.limit_s && state.start_ms !== null) ends.push(state.start_ms + (skew_ms || 0) + state.limit_s * 1000);
    return ends.length ? Math.min.apply(null, ends) : null;
  }

  // The turns a side takes in a typical game (hall/ends.py's TURNS_A_SIDE).
  var TURNS_A_SIDE = 12;

  // When `state`'s game likely ends (ms, the viewer's clock), as the director's page says it
  // (hall/ends.py's likely_end): each side's mean turn so far carried on to TURNS_A_SIDE turns
  // (past them, the side on turn finishes its turn), never more than its time and overtime left;
  // a side with no turn yet takes its opponent's pace, or with neither all its time left; never
  // later than the latest end. Null when not in play or from a clock that says no pace.
  function likelyEnd(state, now_ms, skew_ms) {
    if (!state.pace || ["ready", "running", "paused"].indexOf(state.state) < 0) return null;
    var means = {}, so_far = {}, to_come = 0, i, side;
    for (i = 0; i < 2; i++) {
      side = SIDES[i];
      var done = state.pace[side];
      if (done.turns) {
        means[side] = Math.max(0, done.used_ms - done.base_ms) / done.turns;
        so_far[side] = done.turns + (means[side] ? done.base_ms / means[side] : 0);
      }
    }
    for (i = 0; i < 2; i++) {
      side = SIDES[i];
      var other = SIDES[1 - i];
      if (state[side].used_ms === null) return null;
      var left = leftAt(state, side, now_ms, skew_ms);
      var used = state[side].used_ms + (state[side].left_ms - left);  // it runs on since at_ms
      // a stopped clock's side on turn (the one that did not press last) still has its turn to finish
      var on_turn = state.state === "paused" ? state.pace[other].last : charged(state, side);
      var most = Math.max(0, left);
      if (state.cap_s !== null) most += Math.max(0, state.cap_s * 1000 - Math.max(0, -left));
      var mean = side in means ? means[side] : means[other];
      if (mean === undefined) { to_come += Math.max(0, left); continue; }
      var turns = Math.max(TURNS_A_SIDE, (so_far[side] || 0) + (on_turn ? 1 : 0));
      to_come += Math.min(most, Math.max(0, mean * turns - used));
    }
    var likely = now_ms + Math.floor(to_come), latest = latestEnd(state, now_ms, skew_ms);
    return latest === null ? likely : Math.min(likely, latest);
  }

  // The viewer's clock against ONE clock's (a page keeps one a clock: each Pi's wall clock is its own,
  // hours off without network time): the least delay of its last few live states (a state
  // just made, not a retained copy or one sent again); trusted as synced within SYNCED_MS.
  function Skew() {
    this.delays = [];
  }
  Skew.prototype.sample = function (state, received_ms) {
    this.delays.push(received_ms - state.at_ms);
    if (this.delays.length > SAMPLES) this.delays.shift();
  };
  Skew.prototype.value = function () {
    if (!this.delays.length) return 0;
    var least = Math.min.apply(null, this.delays);
    return Math.abs(least) < SYNCED_MS ? 0 : least;
  };

  return {
    parse: parse, charged: charged, leftAt: leftAt, shownSeconds: shownSeconds,
    format: format, shown: shown, latestEnd: latestEnd, likelyEnd: likelyEnd, Skew: Skew,
  };
})();
