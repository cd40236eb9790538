"use strict";
// the tab's page session (session.js) names every entry, link and lock it sends (the audit trail)
function round() { return document.getElementById("round").value; }
function cell(row, value) { const td = document.createElement("td"); td.textContent = value; row.append(td); return td; }
function players(table) {
  if (table.players) return "A: " + table.players.A + "\nB: " + table.players.B;
  return (table.names || []).join(" v ") + (table.sides ? " (sides not known: " + table.sides + ")" : "");
}
function entryForm(table, locked) {
  const form = document.createElement("form");
  form.dataset.table = table;
  for (const name of ["score_a", "score_b", "seat_a"]) {
    const input = document.createElement("input");
    input.name = name; input.className = "score"; input.placeholder = name === "seat_a" ? "seat A #" : name.slice(-1).toUpperCase();
    input.disabled = locked;
    form.append(input);
  }
  const button = document.createElement("button");
  button.textContent = "Enter"; button.disabled = locked; button.className = "enter";
  form.append(button);
  // both sides' links anew, or one side's (a code one phone leaked): the other side's keeps working
  for (const side of ["", "A", "B"]) {
    const links = document.createElement("button");
    links.type = "button"; links.disabled = locked; links.className = side ? "link-" + side : "links";
    links.textContent = side ? "New link " + side : "New phone links";
    const which = side ? "A new phone link for side " + side + " of table " : "New phone links for table ";
    const old = side ? "? Side " + side + "'s old link stops working (the other side's still works)" : "? The old links stop working";
    links.addEventListener("click", async () => {
      if (!await ask(which + table + ", round " + round() + old + "; the table's clock is sent the new code.",
                     side ? "New link " + side + " for table " + table : "New links for table " + table)) return;
      const body = new URLSearchParams({round: round()});
      if (side) body.set("side", side);
      const response = await fetch("/api/scores/" + encodeURIComponent(table) + "/link", {method: "POST", body, headers: await commandHeaders()});
      const shown = document.createElement("div");
      shown.className = "phone-links";
      const made = response.ok ? await response.json() : null;
      shown.textContent = made ? "A: " + made.A + "\nB: " + made.B + "\n" + made.told : await response.text();
      shown.style.whiteSpace = "pre-line";
      form.append(shown);
    });
    form.append(links);
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = new URLSearchParams(new FormData(form));
    body.set("round", round());
    const response = await fetch("/api/scores/" + encodeURIComponent(table), {method: "POST", body, headers: await commandHeaders()});
    document.getElementById("state").textContent = response.ok ? "" : await response.text();
    show();
  });
  return form;
}
async function show() {
  const response = await fetch("/api/scores?round=" + encodeURIComponent(round()));
  if (!response.ok) { document.getElementById("state").textContent = await response.text(); return; }
  const data = await response.json();
  document.getElementById("lock").hidden = data.locked;
  document.getElementById("unlock").hidden = !data.locked;
  document.getElementById("state").textContent = (data.locked ? "Round " + data.round + " is locked. " : "") + (data.problem || "") + (data.tsh_error ? " TSH's queue: " + data.tsh_error : "");
  const body = document.getElementById("tables");
  body.replaceChildren();
  for (const table of data.tables) {
    const row = document.createElement("tr");
    row.className = table.status; row.dataset.table = table.table;
    cell(row, table.table);
    cell(row, players(table)).className = "players";
    cell(row, table.status + (table.why ? ": " + table.why : "") + (table.tsh ? "\nTSH: " + table.tsh + (table.tsh_why ? ": " + table.tsh_why : "") : "")).style.whiteSpace = "pre-line";
    cell(row, table.scores ? table.scores.A : "");
    cell(row, table.scores ? table.scores.B : "");
    cell(row, table.history.map((h) => h.by + " at " + h.at + ": A " + h.A + ", B " + h.B).join("\n")).style.whiteSpace = "pre-line";
    cell(row, "").append(entryForm(table.table, data.locked));
    body.append(row);
  }
}
document.getElementById("show").addEventListener("click", show);
document.getElementById("add").addEventListener("click", () => {
  const table = document.getElementById("new-table").value.trim();
  if (!table) return;
  const row = document.createElement("tr");
  row.dataset.table = table;
  cell(row, table); cell(row, ""); cell(row, "none"); cell(row, ""); cell(row, ""); cell(row, "");
  cell(row, "").append(entryForm(table, false));
  document.getElementById("tables").append(row);
});
document.getElementById("lock").addEventListener("click", async () => {
  if (!await ask("Lock round " + round() + "? No phone link works after this, and no entry is taken.", "Lock round " + round())) return;
  const body = new URLSearchParams({round: round()});
  const response = await fetch("/api/round/lock", {method: "POST", body, headers: await commandHeaders()});
  document.getElementById("state").textContent = response.ok ? "" : await response.text();
  show();
});
async function offerRound() {  // the round started from the page, else the one TSH takes next
  const answer = await fetch("/api/round");
  const data = answer.ok ? await answer.json() : {};
  const input = document.getElementById("round"), number = data.round ? data.round.round : data.next;
  if (number && input.value === input.defaultValue) input.value = number;
}
offerRound().finally(show);
document.getElementById("unlock").addEventListener("click", async () => {
  if (!await ask("Unlock round " + round() + "? Entries, corrections and its phone links are taken again.", "Unlock round " + round())) return;
  const body = new URLSearchParams({round: round()});
  const response = await fetch("/api/round/unlock", {method: "POST", body, headers: await commandHeaders()});
  document.getElementById("state").textContent = response.ok ? "" : await response.text();
  show();
});
