"use strict";
// This browser tab's page session: it names every command the page sends (the audit trail,
// docs/hall.md), the same on every page of the hall the tab opens. One script for every page.
const session = sessionStorage.getItem("tileclock-session") ||
  Array.from(crypto.getRandomValues(new Uint8Array(4)), b => b.toString(16).padStart(2, "0")).join("");
sessionStorage.setItem("tileclock-session", session);
// the headers of a command: one no plain form can send, and who sent it
function commandHeaders() { return {"X-Tileclock-Command": "1", "X-Tileclock-Session": session}; }
