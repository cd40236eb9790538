"use strict";
const parts = location.pathname.split("/");
const [table, side, token] = parts.slice(-3).map(decodeURIComponent);
const api = "/api/score/" + [table, side, token].map(encodeURIComponent).join("/");
function say(text, refused) {
  const answer = document.getElementById("answer");
  answer.textContent = text;
  answer.className = refused ? "refused" : "";
}
// `Name (#3, A)` (TSH's number and division) as the form says it: `Name (#3, division A)`
function inWords(name) { return name.replace(/ \(#(\d+), ([^)]+)\)$/, " (#$1, division $2)"); }
async function load() {
  const response = await fetch(api);
  if (!response.ok) { say(await response.text(), true); document.getElementById("form").hidden = true; return; }
  const game = await response.json();
  document.getElementById("title").textContent = "Table " + game.table + ", round " + game.round;
  const who = document.getElementById("who");
  who.textContent = "This phone is at side " + game.side + ".";
  if (!game.players && (game.names || []).length) {
    who.textContent += " The players: " + game.names.join(" v ") + (game.sides ? " (which side each sat at is not known: " + game.sides + ")" : "") + ".";
  }
  for (const s of ["A", "B"]) {
    const name = (game.players || {})[s];
    // the side first, then who plays it: a division called A never reads as side A
    document.getElementById("label_" + s.toLowerCase()).textContent =
      "Side " + s + "'s score" + (name ? ": " + inWords(name) : "") + (s === game.side ? " (yours)" : "");
  }
  if (!game.players && (game.seats || []).length) {
    const choice = document.getElementById("seat_a");
    for (const seat of game.seats) {
      const option = document.createElement("option");
      option.value = String(seat.number);
      option.textContent = seat.name;
      choice.append(option);
    }
    document.getElementById("seat").hidden = false;
  }
  const list = document.getElementById("penalties");
  for (const line of game.penalties || []) {
    const item = document.createElement("li");
    item.textContent = line;
    list.append(item);
  }
}
document.getElementById("form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = new URLSearchParams(new FormData(event.target));
  const response = await fetch(api, {method: "POST", body, headers: {"X-Tileclock-Command": "1"}});
  if (!response.ok) { say(await response.text(), true); return; }
  const state = await response.json();
  const mine = "Entered: A " + body.get("score_a") + ", B " + body.get("score_b") + ". ";
  const more = {
    agreed: "Both sides agree: thank you.",
    settled: "The director has settled this table.",
    disagree: "The two entries disagree: the director will settle it.",
    waiting: "Waiting for the other side's entry.",
  }[state.status] || "";
  say(mine + more, state.status === "disagree");
});
load();
