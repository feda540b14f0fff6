/**
 * The simulator's renaming rule (lean-bridge/simulator/binderNames.ts): a reference with the name an `intro`
 * binds chosen differently is the same proof; every other difference, and every renaming whose meaning token
 * order cannot settle, is not.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { sameUpToIntroducedNames } from "../../lean-bridge/simulator/binderNames";

const words = (text: string) => text.split(" ");

test("a name an intro binds may be chosen differently, consistently, where nothing is captured", () => {
  const reference = words("by intro hp exact And.intro hp hq");
  for (const candidate of [
    "by intro hp exact And.intro hp hq",
    "by intro h exact And.intro h hq",
    "by intro h₁ exact And.intro h₁ hq",
    "by intro x' exact And.intro x' hq",
  ])
    assert.equal(sameUpToIntroducedNames(reference, words(candidate)), true, candidate);
  for (const candidate of [
    // Onto a name the reference uses: the hypothesis it meant is shadowed.
    "by intro hq exact And.intro hq hq",
    // Not consistent, or a name the reference does not bind.
    "by intro h exact And.intro hp hq",
    "by intro h exact And.intro h hr",
    // Longer words may be keywords of the workspace; two-letter keywords and tactics always are.
    "by intro hyp exact And.intro hyp hq",
    "by intro at exact And.intro at hq",
    "by intro rw exact And.intro rw hq",
    // Another length, another tactic.
    "by intro h exact And.intro h",
    "by intros h exact And.intro h hq",
  ])
    assert.equal(sameUpToIntroducedNames(reference, words(candidate)), false, candidate);
});

test("a name the reference mentions before its intro, or two names made one, is not renamed", () => {
  // `hp` before the intro is the statement's: renaming every `hp` would change what the first one means.
  assert.equal(
    sameUpToIntroducedNames(words("by have := hp intro hp exact hp"), words("by have := hp intro h exact h")),
    false,
  );
  assert.equal(
    sameUpToIntroducedNames(words("by intro a intro b exact f a b"), words("by intro h intro h exact f h h")),
    false,
  );
  assert.equal(
    sameUpToIntroducedNames(words("by intro a intro b exact f a b"), words("by intro x intro y exact f x y")),
    true,
  );
});
