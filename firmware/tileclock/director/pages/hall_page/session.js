"use strict";
// The headers of a command from the page's own script: one no plain form can send. Who sent it is
// the server's to say: the session its cookie names (docs/hall.md, "The two doors"), never a label
// a page could make up. One script for every page. With them, a one-time value asked for now: the
// server takes it with the action, so the same POST sent again is refused as a replay. Without one
// (the server unreachable) the action goes without, and the server's refusal is shown as any other.
async function commandHeaders() {
  const headers = {"X-Tileclock-Command": "1"};
  try {
    const reply = await fetch("/api/once", {method: "POST", headers});
    if (reply.ok) headers["X-Tileclock-Once"] = (await reply.json()).once;
  } catch (error) { /* the action itself then says what failed */ }
  return headers;
}
// Before a button changes a game or a round, the page asks, in a dialog of its own (never the
// browser's `confirm`: a decoy page, or a browser that hides repeated prompts, cannot answer it,
// and its Yes names the action). No has the focus, so Enter or a second click does not say Yes;
// Escape is No. `yesLabel` names the action ("Lock round 3"). The answer: a Promise of true (Yes) or false.
function ask(question, yesLabel) {
  let dialog = document.getElementById("ask");
  if (!dialog) {
    dialog = document.createElement("dialog");
    dialog.id = "ask";
    const text = document.createElement("p"), buttons = document.createElement("p");
    text.className = "question";
    text.style.whiteSpace = "pre-line";
    for (const [name, value] of [["yes", "yes"], ["no", "no"]]) {
      const button = document.createElement("button");
      button.type = "button"; button.className = name; button.textContent = "No";
      button.addEventListener("click", () => dialog.close(value));
      buttons.append(button, " ");
    }
    dialog.append(text, buttons);
    document.body.append(dialog);
  }
  if (dialog.open) return Promise.resolve(false);  // one question at a time: the open one stands
  dialog.querySelector(".question").textContent = question;
  dialog.querySelector("button.yes").textContent = yesLabel;
  dialog.returnValue = "";  // Escape closes it with no value: No
  return new Promise(resolve => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), {once: true});
    dialog.showModal();
    dialog.querySelector("button.no").focus();
  });
}
