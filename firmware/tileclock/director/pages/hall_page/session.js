"use strict";
// The headers of a command from the page's own script: one no plain form can send. Who sent it is
// the server's to say: the session its cookie names (docs/hall.md, "The two doors"), never a label
// a page could make up. One script for every page.
function commandHeaders() { return {"X-Tileclock-Command": "1"}; }
