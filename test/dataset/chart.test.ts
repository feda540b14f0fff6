import { test } from "node:test";
import assert from "node:assert/strict";
import { kindSplitChart } from "../../lean-bridge/dataset/chart";

test("the card's chart draws one bar per kind, segment widths proportional to the counts", () => {
  const svg = kindSplitChart(
    { proof: { train: 80, validation: 10, test: 10 }, tactic: { train: 40, test: 10 } },
    "150 tasks <from> ws",
  );
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /150 tasks &lt;from&gt; ws/, "text is escaped");
  const width = (label: string) =>
    Number(new RegExp(`width="([\\d.]+)"[^>]*><title>${label}`).exec(svg)?.[1]);
  assert.ok(Math.abs(width("proof / train: 80") / width("tactic / train: 40") - 2) < 0.01);
  assert.ok(Math.abs(width("proof / train: 80") / width("proof / test: 10") - 8) < 0.01);
  assert.doesNotMatch(svg, /tactic \/ validation/, "no empty segment");
  assert.match(svg, />100<\/text>/);
  assert.match(svg, />50<\/text>/);
});
