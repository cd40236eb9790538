// The spectators' pages (docs/hall.md, "Spectators"): read-only, straight from the spectators'
// broker over WebSockets with mqtt.js (mqtt.min.js beside this file). Everything received is
// anyone's bytes: checked by TileclockCount.parse, shown with textContent only, never as HTML.
"use strict";
(function () {
  var C = TileclockCount;
  var ROOT = "tileclock";
  var BRIDGE = ROOT + "/viewers/bridge"; // "1"/"0": the spectators' broker's link to the hall's
  var MAX_BOARDS = 500; // boards kept at most: a flood of clock ids cannot grow the page for ever
  var params = new URLSearchParams(location.search);
  var view = document.body.dataset.view; // "boards" or "overlay"
  var only = params.get("board"); // one board (its clock id or board name), large
  var boards = new Map(); // clock id -> {state, skew}: each clock's own offset (its Pi's wall clock)
  var offline = new Map(); // clock id -> since when it is offline (ms; 0: since before the page opened)
  var linked = { broker: false, bridge: true, ever: false };
  var staleSince = null; // when the viewer stopped receiving (ms), or null

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function name(state) {
    if (state.table !== null) return "Table " + state.table;
    return "Board " + (state.board || state.clock);
  }

  function matches(state) {
    return !only || state.clock === only || state.board === only || String(state.table) === only;
  }

  function stale() {
    return !linked.broker || !linked.bridge;
  }

  function setStale() {
    var now = stale();
    if (now && staleSince === null) staleSince = Date.now();
    if (!now) staleSince = null;
  }

  // What a side shows now; frozen where the viewer stopped receiving (it never counts on).
  function sideText(entry, side) {
    var at = staleSince !== null ? staleSince : Date.now();
    if (offline.has(entry.state.clock)) {
      // gone since a moment the page saw, or, told when it opened, since its last state at the latest
      at = Math.min(at, offline.get(entry.state.clock) || entry.state.at_ms + entry.skew.value());
    }
    return C.shown(entry.state, side, at, entry.skew.value());
  }

  function sideNode(entry, side, playerName) {
    var state = entry.state;
    var text = sideText(entry, side);
    var over = text.charAt(0) === "-";
    var turn = C.charged(state, side) && state.run !== null;
    var box = el("div", "side side-" + side + (turn ? " turn" : "") + (over ? " over" : ""));
    var head = el("div", "who");
    head.appendChild(el("span", "label", playerName || "Player " + side));
    if (turn) head.appendChild(el("span", "mark", "\u25B6 TO PLAY"));
    box.appendChild(head);
    box.appendChild(el("div", "time", text));
    var foot = el("div", "foot");
    if (over) foot.appendChild(el("span", "overtime", "OVERTIME"));
    if (state[side].pen) foot.appendChild(el("span", "pen", "\u2212" + state[side].pen + " pts"));
    box.appendChild(foot);
    return box;
  }

  function status(entry) {
    if (stale() || offline.has(entry.state.clock)) return "STALE";
    if (entry.state.state === "ended" && entry.state.ended === "round_over") return "ROUND OVER";
    return { ready: "READY", running: "", paused: "STOPPED", ended: "ENDED" }[entry.state.state];
  }

  // The board's call to the director, for the hall to see (answered from the director's page only).
  function callWord(state) {
    if (state.call === "called") return "DIRECTOR CALLED";
    if (state.call === "taken") return "DIRECTOR COMING";
    return "";
  }

  // A round set to start at a time of day, while the game waits for it: that time, the viewer's own;
  // once it has passed by the clock's own time (the board's skew), the round has begun
  function startWord(entry) {
    var state = entry.state;
    if (state.state !== "ready" || state.start_ms === null) return "";
    var at = new Date(state.start_ms);
    var pad = function (n) { return String(n).padStart(2, "0"); };
    var began = Date.now() - entry.skew.value() >= state.start_ms;
    return (began ? "ROUND BEGAN " : "STARTS ") + pad(at.getHours()) + ":" + pad(at.getMinutes()) + ":" + pad(at.getSeconds());
  }

  function classOf(word) {
    return "status status-" + word.toLowerCase().replace(/ /g, "-");
  }

  function boardNode(entry, large) {
    var state = entry.state;
    var card = el("section", "board" + (large ? " large" : ""));
    var word = status(entry);
    if (word === "STALE") card.className += " stale";
    var head = el("header");
    var title = el("a", "name", name(state));
    title.href = "?board=" + encodeURIComponent(state.clock);
    head.appendChild(title);
    if (state.round !== null) head.appendChild(el("span", "round", "Round " + state.round));
    var starts = startWord(entry);
    if (starts) head.appendChild(el("span", "starts", starts));
    if (word) head.appendChild(el("span", classOf(word), word));
    card.appendChild(head);
    var called = callWord(state);
    if (called) {
      card.className += " calling";
      card.appendChild(el("div", "call call-" + state.call, "\u260E " + called));
    }
    var sides = el("div", "sides");
    sides.appendChild(sideNode(entry, "A"));
    sides.appendChild(sideNode(entry, "B"));
    card.appendChild(sides);
    return card;
  }

  function order(a, b) {
    var ta = a.state.table, tb = b.state.table;
    if (typeof ta === "number" && typeof tb === "number" && ta !== tb) return ta - tb;
    return name(a.state).localeCompare(name(b.state), undefined, { numeric: true });
  }

  // "Round 4 ends by 15:42 at the latest, likely 15:20: Board 7, Board 31 will be last": the boards
  // in play of the newest round on the page, each by its own clock's count (C.latestEnd and
  // C.likelyEnd, as the director's page says them; a board gone offline or a page not receiving
  // counted as stopped), those within a minute of the last named (by the likely end where one is
  // known, as the director's page names them)
  function roundEnds(list) {
    var now = staleSince !== null ? staleSince : Date.now();
    var ends = list.map(function (entry) {
      var at = now; // as sideText counts it: frozen where the page stopped receiving, or its clock went offline
      if (offline.has(entry.state.clock)) {
        at = Math.min(at, offline.get(entry.state.clock) || entry.state.at_ms + entry.skew.value());
      }
      var latest = C.latestEnd(entry.state, at, entry.skew.value());
      var likely = C.likelyEnd(entry.state, at, entry.skew.value());
      return { entry: entry, latest: latest === null ? null : latest + Date.now() - at,
               likely: likely === null ? null : likely + Date.now() - at };
    }).filter(function (end) { return end.latest !== null || end.likely !== null; });
    var rounds = ends.map(function (end) { return end.entry.state.round; }).filter(function (r) { return r !== null; });
    var round = rounds.length ? Math.max.apply(null, rounds) : null;
    ends = ends.filter(function (end) { return end.entry.state.round === round; });
    if (!ends.length) return "";
    var most = function (key) {
      var known = ends.filter(function (end) { return end[key] !== null; });
      return known.length ? Math.max.apply(null, known.map(function (end) { return end[key]; })) : null;
    };
    var last = most("latest"), likely = most("likely"), by = likely !== null ? "likely" : "latest";
    var names = ends.filter(function (end) { return end[by] !== null && end[by] >= (by === "likely" ? likely : last) - 60000; })
      .sort(function (a, b) { return order(a.entry, b.entry); }).map(function (end) { return name(end.entry.state); }).slice(0, 5);
    var pad = function (n) { return String(n).padStart(2, "0"); };
    var clock = function (ms) { var when = new Date(ms); return pad(when.getHours()) + ":" + pad(when.getMinutes()); };
    var said = last !== null ? " ends by " + clock(last) + " at the latest" + (likely !== null ? ", likely " + clock(likely) : "")
      : " likely ends at " + clock(likely);
    return (round === null ? "The round" : "Round " + round) + said + ": " + names.join(", ") + " will be last";
  }

  function drawBoards() {
    var list = Array.from(boards.values()).filter(function (entry) { return matches(entry.state); });
    list.sort(order);
    var main = document.getElementById("boards");
    var nodes = list.map(function (entry) { return boardNode(entry, !!only); });
    main.replaceChildren.apply(main, nodes);
    var ends = document.getElementById("ends");
    ends.textContent = only ? "" : roundEnds(list);
    ends.hidden = !ends.textContent;
    var note = document.getElementById("note");
    if (stale()) {
      note.textContent = !linked.broker && !linked.ever
        ? "Connecting to the hall\u2026"
        : !linked.broker
        ? "Not receiving: the connection to the hall is lost (trying again). Times shown are stale."
        : "Not receiving: the hall's broker is out of reach. Times shown are stale.";
    } else if (!list.length) {
      note.textContent = only ? "No board " + only + " yet." : "No boards yet.";
    } else {
      note.textContent = "";
    }
    document.body.classList.toggle("is-stale", stale());
  }

  function drawOverlay() {
    var entry = null;
    boards.forEach(function (candidate) {
      if (!entry && matches(candidate.state)) entry = candidate;
    });
    var root = document.getElementById("overlay");
    if (!entry) {
      root.replaceChildren();
      return;
    }
    var state = entry.state;
    var bar = el("div", "bar" + (status(entry) === "STALE" ? " stale" : ""));
    bar.appendChild(sideNode(entry, "A", params.get("a")));
    var middle = el("div", "middle");
    middle.appendChild(el("div", "name", name(state)));
    if (state.round !== null) middle.appendChild(el("div", "round", "Round " + state.round));
    var word = status(entry);
    if (word) middle.appendChild(el("div", classOf(word), word));
    var called = callWord(state) || startWord(entry);
    if (called) middle.appendChild(el("div", state.call ? "call call-" + state.call : "starts", called));
    bar.appendChild(middle);
    bar.appendChild(sideNode(entry, "B", params.get("b")));
    root.replaceChildren(bar);
  }

  function draw() {
    if (view === "overlay") drawOverlay();
    else drawBoards();
  }

  function take(topic, payload, retained) {
    var parts = topic.split("/");
    if (topic === BRIDGE) {
      linked.bridge = payload !== "0";
      setStale();
      return;
    }
    if (parts.length !== 3 || parts[0] !== ROOT) return;
    var clock = parts[1], kind = parts[2];
    var entry = boards.get(clock);
    if (kind === "status") {
      if (payload !== "offline") offline.delete(clock);
      else if (!offline.has(clock) && offline.size < MAX_BOARDS) offline.set(clock, retained ? 0 : Date.now());
      return;
    }
    if (kind !== "public") return;
    var state = C.parse(payload);
    if (!state || state.clock !== clock) return;
    if (!entry) {
      if (boards.size >= MAX_BOARDS) return;
      // a skew of its own: a Pi without network time may be hours off, and only its own board with it
      entry = { state: state, skew: new C.Skew() };
      boards.set(clock, entry);
    } else if (state.boot !== entry.state.boot) {
      // another boot: a clock started again (its seqs go on), or a new card (its seqs start
      // again, lower): news either way, on a Pi whose wall clock may be another's
      entry.skew = new C.Skew();
      if (!retained) entry.skew.sample(state, Date.now());
    } else if (state.seq < entry.state.seq) {
      return; // an older state of the same boot (a copy sent again): the newer one stands
    } else if (state.seq > entry.state.seq && !retained) {
      entry.skew.sample(state, Date.now());
    }
    entry.state = state;
  }

  var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/";
  var client = mqtt.connect(url, {
    keepalive: 5, // a dead link shows as stale within about 10 s
    reconnectPeriod: 2000,
    connectTimeout: 5000,
    clean: true,
    clientId: "viewer-" + Math.random().toString(16).slice(2, 14),
  });
  client.on("connect", function () {
    linked.broker = true;
    linked.ever = true;
    setStale();
    client.subscribe([ROOT + "/+/public", ROOT + "/+/status", BRIDGE], { qos: 0 });
  });
  client.on("close", function () {
    linked.broker = false;
    setStale();
    frame();
  });
  client.on("offline", function () {
    linked.broker = false;
    setStale();
    frame();
  });
  client.on("message", function (topic, message, packet) {
    take(topic, message.toString(), packet.retain);
    frame(); // drawn at once, and the next draw planned for what now runs
  });
  window.tileclockViewer = { boards: boards, linked: linked, draw: draw, take: take };

  // The next draw: when a running side's display next changes (so it changes within a few ms of
  // the clock's), else in 250 ms for anything else that came.
  function nextDelay() {
    var delay = 250, now = Date.now();
    if (staleSince !== null) return delay;
    boards.forEach(function (entry) {
      ["A", "B"].forEach(function (side) {
        if (offline.has(entry.state.clock) || !C.charged(entry.state, side)) return;
        var left = C.leftAt(entry.state, side, now, entry.skew.value());
        delay = Math.min(delay, left - (Math.ceil(left / 1000) - 1) * 1000 + 1);
      });
    });
    return Math.max(1, delay);
  }

  var timer = null;
  function frame() {
    draw();
    clearTimeout(timer);
    timer = setTimeout(frame, nextDelay());
  }
  frame();
})();
