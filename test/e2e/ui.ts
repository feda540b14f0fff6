/** Browser-side steps shared by the real-VS-Code UI tests: webview frames and notification toasts. */
/// <reference lib="dom" />
import type { Frame, Locator, Page } from "playwright-core";
import { runCommand } from "./codeServer";

/**
 * The text of a frame's document, and of the webview content frame inside it: a webview without scripts (the
 * report panel) gets no script context of its own, so it is read from its host frame (same origin).
 */
export async function frameText(frame: Frame): Promise<string> {
  return frame
    .evaluate(() => {
      const inner = document.querySelector<HTMLIFrameElement>("iframe#active-frame");
      return `${document.body?.innerText ?? ""}\n${inner?.contentDocument?.body?.innerText ?? ""}`;
    })
    .catch(() => "");
}

/**
 * The webview frame whose document contains `text` (webviews render in nested iframes); bounded wait.
 * `host`: the frame hosting a script-less webview that contains it (see frameText).
 */
export async function frameWith(
  page: Page,
  text: string,
  tries = 120,
  host = false,
): Promise<Frame | undefined> {
  for (let k = 0; k < tries; k++) {
    for (const frame of page.frames()) {
      const own = host
        ? await frameText(frame)
        : await frame.evaluate(() => document.body?.innerText ?? "").catch(() => "");
      if (own.includes(text)) return frame;
    }
    await page.waitForTimeout(250);
  }
  return undefined;
}

/** The notification toast whose message matches `text`. */
export function toast(page: Page, text: RegExp): Locator {
  return page
    .locator(".notifications-toasts .notification-list-item", {
      has: page.locator(".notification-list-item-message", { hasText: text }),
    })
    .first();
}

/**
 * Clicks a button of the notification matching `text`: in its toast, or, as an information toast hides itself
 * after some seconds, in the notification center (opened from the palette). Bounded by `timeout`.
 */
export async function clickToastButton(
  page: Page,
  text: RegExp,
  button: string,
  timeout: number,
): Promise<string> {
  const deadline = Date.now() + timeout;
  const inCenter = page
    .locator(".notifications-center .notification-list-item", {
      has: page.locator(".notification-list-item-message", { hasText: text }),
    })
    .first();
  for (let round = 0; ; round++) {
    for (const item of [toast(page, text), inCenter]) {
      if (!(await item.isVisible().catch(() => false))) continue;
      const message = await item.locator(".notification-list-item-message").innerText();
      await item.hover();
      await item.locator(".monaco-button", { hasText: button }).first().click();
      return message;
    }
    if (Date.now() > deadline)
      throw new Error(`no notification matching ${text} with "${button}" within ${timeout} ms`);
    // Every few seconds look in the center too (a toast may have come and gone between two looks).
    if (
      round % 10 === 9 &&
      !(await page
        .locator(".notifications-center.visible")
        .isVisible()
        .catch(() => false))
    )
      await runCommand(page, "Notifications: Show Notifications");
    await page.waitForTimeout(500);
  }
}

/** Progress lines of a long UI test, on stderr (a test that hangs says where). */
export function stage(what: string): void {
  process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${what}\n`);
}

/**
 * Lets the webview paint its latest frame before a picture. Only the picture depends on it: a frame VS Code has
 * replaced meanwhile (a tab reopened beside it re-parents webviews) has nothing left to paint, so that is no failure.
 */
export async function painted(frame: Frame): Promise<void> {
  await frame
    .evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    .catch((error: unknown) => {
      if (!(error instanceof Error && /detached/i.test(error.message))) throw error;
    });
}

/**
 * The training dashboard's frame once its script has run (it draws the tiles; its static text alone shows only
 * that the page arrived). Looked up afresh: a page that did not start is loaded again, or its panel opened anew,
 * by the extension (extension/state/dashboardBoot.ts), in a new frame. Bounded wait.
 */
export async function dashboardFrame(page: Page, tries = 240): Promise<Frame | undefined> {
  for (let k = 0; k < tries; k++) {
    for (const frame of page.frames()) {
      const drawn = await frame
        .evaluate(() => document.querySelectorAll("#tiles .tile").length > 0)
        .catch(() => false);
      if (drawn) return frame;
    }
    await page.waitForTimeout(250);
  }
  return undefined;
}
