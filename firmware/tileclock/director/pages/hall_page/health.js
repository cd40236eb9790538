"use strict";
// A clock's health as its state says it (device/health.py, held to shape by wire/state.py): the
// hall page's fleet table and a board's page share these words (and a moved game's, `movedWords`).
// Each figure may be null: unknown.
const START_WORDS = {start: "a fresh start", restart: "a restart (same boot)", power_cut: "a power cut or reboot"};
function healthSpan(s) {
  if (s === null || s === undefined) return "?";
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
  return d ? d + " d " + h + " h" : h ? h + " h " + m + " min" : m + " min";
}
// the version most clocks run: a clock on another is flagged (null when no clock says one)
function usualVersion(boards) {
  const counts = {};
  boards.forEach(b => { if (b.health) counts[b.health.v] = (counts[b.health.v] || 0) + 1; });
  const ranked = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return ranked.length ? ranked[0][0] : null;
}
function powerWords(b) {
  const p = b.health && b.health.power;
  if ((p && p.low) || (b.faults && b.faults.power)) return "power supply too weak";
  if (!p || !p.src) return "not watched";
  if (p.flags === null) return "cannot be read";
  return (p.flags & 0x10000) ? "good now, dipped earlier" : "good";
}
function wallWords(b) {
  const t = b.time, sync = b.health ? b.health.sync : null;
  if (t) return (t.synced ? "synchronised, " : "NOT synchronised, ") + (t.offset_us / 1000).toFixed(1) + " ms";
  return sync === null || sync === undefined ? "sends no time figures" : sync ? "synchronised (sends no time figures)" : "NOT synchronised";
}
// the board's last self-test since its restart (clock/selftest.py), as its state says it
function selftestWords(b) {
  const t = b.selftest;
  if (!t) return "never tested";
  return t.result === "pass" ? "passed" : "failed: " + (t.failed.join(", ") || "?");
}
// [label, value] of a board's health, in the fleet table's order
function healthFacts(b, usual) {
  const h = b.health;
  if (!h) return [];
  return [
    ["version", h.v + (usual && h.v !== usual ? " (not " + usual + ")" : "")],
    ["wall clock", wallWords(b)],
    ["Wi-Fi", h.wifi ? h.wifi.dbm + " dBm (" + h.wifi.if + ")" : "?"],
    ["card free", h.free_mb === null ? "?" : h.free_mb + " MB"],
    ["journal", h.journal_kb === null ? "in memory" : h.journal_kb + " kB"],
    ["up", healthSpan(h.up_s) + " (this run " + healthSpan(h.run_s) + ")"],
    ["last start", START_WORDS[h.restart] || "?"],
    ["power", powerWords(b)],
    ["self-test", selftestWords(b)],
  ];
}
// a game moved to a spare (docs/director-guide.md, "A spare clock"), on the dead clock's board or
// the spare's: where it went or came from, and the time the dead clock's late records add
function movedWords(b) {
  const late = m => m.late ? "; the dead clock's late records show " + m.late.words + " before the move (not counted)" : "";
  if (b.moved) return "game moved to clock " + b.moved.to + (b.moved.to_board ? " (board " + b.moved.to_board + ")" : "") +
    ": answer its calls and give its time there" + late(b.moved);
  if (b.took_over) return "taken over from clock " + b.took_over.from +
    (b.took_over.from_board ? " (board " + b.took_over.from_board + ")" : "") + late(b.took_over);
  return "";
}
