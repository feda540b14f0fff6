/**
 * The dashboard webview's script (bundled by esbuild into dist/dashboard.js with uPlot; no CDN). It asks the
 * extension for the run's state, then applies the same DashboardMessage reducer to every live message.
 * Colours come from the theme's CSS variables, and the charts are redrawn when the theme changes.
 */
/// <reference lib="dom" />
import uPlot from "uplot";
import {
  emptyDashboard,
  passRateByKind,
  type DashboardMessage,
  type DashboardRequest,
} from "../state/dashboardModel";
import {
  applyInWebview,
  headerText,
  integerTicks,
  rewardSeries,
  tiles,
  type ChartSeries,
  type WebviewCopy,
} from "../state/dashboardView";

declare function acquireVsCodeApi(): {
  postMessage(message: DashboardRequest): void;
  setState(state: unknown): void;
};

const vscodeApi = acquireVsCodeApi();
let copy: WebviewCopy = { synced: false, state: emptyDashboard() };
const charts = new Map<string, uPlot>();

function themeColor(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

function palette(): string[] {
  return [
    themeColor("--vscode-charts-blue", "#3794ff"),
    themeColor("--vscode-charts-green", "#89d185"),
    themeColor("--vscode-charts-orange", "#d18616"),
    themeColor("--vscode-charts-purple", "#b180d7"),
    themeColor("--vscode-charts-red", "#f14c4c"),
    themeColor("--vscode-charts-yellow", "#cca700"),
  ];
}

type Series = ChartSeries;

/** The step axis: whole steps only. */
function stepSplits(_u: uPlot, _axis: number, min: number, max: number): number[] {
  return integerTicks(min, max, 6);
}

/** `rate`: shares and rewards, drawn on an axis spanning at least 0–1 (wider when a reward goes below 0). */
function draw(id: string, steps: number[], series: Series[], rate = false): void {
  const host = document.getElementById(id);
  if (!host) return;
  const data = [steps, ...series.map((s) => s.values)] as uPlot.AlignedData;
  const existing = charts.get(id);
  const signature = series.map((s) => s.label).join("|");
  if (existing && existing.root.dataset.series === signature) {
    existing.setData(data);
    return;
  }
  existing?.destroy();
  const fg = themeColor("--vscode-foreground", "#ccc");
  const grid = themeColor("--vscode-charts-lines", "rgba(128,128,128,0.25)");
  const colors = palette();
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const chart = new uPlot(
    {
      width: Math.max(240, host.clientWidth),
      height: 180,
      scales: {
        x: { time: false },
        ...(rate
          ? {
              y: {
                range: (_u: uPlot, min: number, max: number): uPlot.Range.MinMax => [
                  Math.min(0, min),
                  Math.max(1, max),
                ],
              },
            }
          : {}),
      },
      axes: [{ ...axis, label: "step", splits: stepSplits }, axis],
      series: [
        { label: "step" },
        ...series.map((s, k) => ({
          label: s.label,
          stroke: colors[k % colors.length],
          width: 2,
          spanGaps: true,
          ...(s.dashed ? { dash: [6, 4] } : {}),
        })),
      ],
      legend: { show: true },
    },
    data,
    host,
  );
  chart.root.dataset.series = signature;
  charts.set(id, chart);
}

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(): void {
  const state = copy.state;
  const run = document.getElementById("run")!;
  run.textContent = headerText(state);
  run.classList.toggle("simulator", state.verifier.includes("simulator"));
  document.getElementById("tiles")!.innerHTML = tiles(state)
    .map(
      (t) =>
        `<div class="tile" title="${escape(t.title)}"><div class="tile-value">${escape(t.value)}</div><div class="tile-label">${escape(t.label)}</div></div>`,
    )
    .join("");
  const c = state.curves;
  draw("chart-reward", state.steps, rewardSeries(state), true);
  const byKind = passRateByKind(state);
  draw(
    "chart-kinds",
    state.kindSteps,
    Object.entries(byKind)
      .sort()
      .map(([label, values]) => ({ label, values })),
    true,
  );
  draw("chart-loss", state.steps, [{ label: "loss", values: c.loss }]);
  draw("chart-kl", state.steps, [{ label: "KL", values: c.kl }]);
  draw("chart-clip", state.steps, [{ label: "clip fraction", values: c.clipFraction }], true);
  draw("chart-speed", state.steps, [
    { label: "tokens/s", values: c.tokensPerSecond },
    { label: "checks/s", values: c.checksPerSecond },
  ]);
}

let scheduled = false;
function scheduleRender(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    render();
  });
}

window.addEventListener("message", (event: MessageEvent<DashboardMessage>) => {
  copy = applyInWebview(copy, event.data);
  scheduleRender();
});

// VS Code swaps the body's theme class when the colour theme changes: rebuild the charts with new colours.
new MutationObserver(() => {
  for (const chart of charts.values()) chart.destroy();
  charts.clear();
  scheduleRender();
}).observe(document.body, { attributes: true, attributeFilter: ["class"] });
window.addEventListener("resize", () => {
  for (const [id, chart] of charts)
    chart.setSize({ width: Math.max(240, document.getElementById(id)!.clientWidth), height: 180 });
});

render();
// Any saved state makes VS Code restore this tab after a window reload (through the extension's serializer,
// which sends the run's state afresh); the state itself is the extension's to keep.
vscodeApi.setState({ dashboard: 1 });
vscodeApi.postMessage({ type: "ready" });
