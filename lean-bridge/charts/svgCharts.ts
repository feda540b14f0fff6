/**
 * Line and bar charts for the training and evaluation reports, as self-contained SVG in the style of the dataset
 * card's chart (lean-bridge/dataset/chart.ts): white background, sans-serif 13 px, the same palette, a <title>
 * per mark so a hover shows the value. No script, no font or file to fetch: the reports read offline. Every
 * report reaches them here, below the folders that write reports.
 */

/** Text made safe inside SVG and HTML elements and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export const PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d"];

export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 2.5, 5, 10]) if (value <= m * power) return m * power;
  return 10 * power;
}

/** A tick label with as many digits as the axis' range needs (0.002 stays readable). */
function label(value: number, range = 1): string {
  if (Number.isInteger(value) || Math.abs(value) >= 100) return String(Math.round(value));
  const digits = Math.min(6, Math.max(2, 2 - Math.floor(Math.log10(Math.max(range, 1e-9)))));
  return value.toFixed(digits);
}

/** A line chart of one or more series over steps; `yMax` fixes the scale (1 for rates). */
export function lineChart(
  series: Series[],
  options: { title: string; xLabel: string; yMax?: number },
): string {
  const width = 560;
  const height = 260;
  const left = 52;
  const right = 16;
  const top = 34;
  const bottom = 58;
  const all = series.flatMap((s) => s.points);
  const xMin = all.length ? Math.min(...all.map((p) => p.x)) : 0;
  const xMax = Math.max(...all.map((p) => p.x), xMin + 1);
  const low = Math.min(0, ...all.map((p) => p.y));
  const high = Math.max(0, ...all.map((p) => p.y));
  // Scales that fit the data: a loss that is all negative gets a negative axis, not [0, 1].
  const yMin = low < 0 ? -niceMax(-low) : 0;
  const yMax = options.yMax ?? (high > 0 || yMin === 0 ? niceMax(high) : 0);
  const px = (x: number) => left + ((x - xMin) / (xMax - xMin)) * (width - left - right);
  const py = (y: number) => top + (1 - (y - yMin) / (yMax - yMin || 1)) * (height - top - bottom);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const y = yMin + f * (yMax - yMin);
    return `<line x1="${left}" x2="${width - right}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#e0e0e0"/><text x="${left - 6}" y="${py(y).toFixed(1)}" text-anchor="end" dominant-baseline="middle" font-size="11">${label(y, yMax - yMin)}</text>`;
  });
  const lines = series.map((s, k) => {
    const colour = PALETTE[k % PALETTE.length]!;
    const path = s.points
      .map((p, j) => `${j ? "L" : "M"}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`)
      .join("");
    const dots =
      s.points.length <= 60
        ? s.points
            .map(
              (p) =>
                `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="2.5" fill="${colour}"><title>${escapeXml(`${s.name}, ${options.xLabel} ${p.x}: ${p.y.toFixed(3)}`)}</title></circle>`,
            )
            .join("")
        : "";
    return `<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>${dots}`;
  });
  const legend = series.map((s, k) => {
    const x = left + k * Math.min(150, (width - left - right) / Math.max(1, series.length));
    return `<rect x="${x}" y="${height - 20}" width="12" height="12" fill="${PALETTE[k % PALETTE.length]}"/><text x="${x + 18}" y="${height - 14}" dominant-baseline="middle">${escapeXml(s.name)}</text>`;
  });
  const empty =
    all.length === 0
      ? `<text x="${width / 2}" y="${height / 2}" text-anchor="middle" fill="#888">no data yet</text>`
      : "";
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="18" font-weight="bold">${escapeXml(options.title)}</text>`,
    ...grid,
    `<text x="${(left + width - right) / 2}" y="${height - 34}" text-anchor="middle" font-size="11">${escapeXml(options.xLabel)} (${label(xMin)}–${label(xMax)})</text>`,
    ...lines,
    empty,
    ...legend,
    "</svg>",
  ].join("\n");
}

/** One horizontal bar split into parts (e.g. the verdict mix), with a legend. */
export function stackedBar(parts: { name: string; value: number; colour: string }[], title: string): string {
  const width = 560;
  const height = 96;
  const left = 16;
  const barWidth = width - 2 * left;
  const total = parts.reduce((n, p) => n + p.value, 0) || 1;
  let x = left;
  const rects = parts.map((p) => {
    const w = (p.value / total) * barWidth;
    const rect =
      p.value > 0
        ? `<rect x="${x.toFixed(1)}" y="30" width="${w.toFixed(1)}" height="24" fill="${p.colour}"><title>${escapeXml(`${p.name}: ${p.value} (${((100 * p.value) / total).toFixed(1)}%)`)}</title></rect>`
        : "";
    x += w;
    return rect;
  });
  let lx = left;
  const legend = parts
    .filter((p) => p.value > 0)
    .map((p) => {
      const text = `${p.name} ${p.value}`;
      const item = `<rect x="${lx}" y="70" width="12" height="12" fill="${p.colour}"/><text x="${lx + 16}" y="76" dominant-baseline="middle" font-size="12">${escapeXml(text)}</text>`;
      lx += 24 + text.length * 7;
      return item;
    });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="18" font-weight="bold">${escapeXml(title)}</text>`,
    ...rects,
    ...legend,
    "</svg>",
  ].join("\n");
}
