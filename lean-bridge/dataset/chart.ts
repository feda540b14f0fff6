/**
 * A picture of the dataset for its card: one horizontal bar per hole kind, split into train / validation /
 * test, as a self-contained SVG (no fonts or scripts to fetch; it renders in VS Code's preview and on the Hub).
 */
import { escapeXml } from "../charts/svgCharts";

const SPLIT_COLOURS: Record<string, string> = { train: "#4c78a8", validation: "#f58518", test: "#54a24b" };

export function kindSplitChart(table: Record<string, Record<string, number>>, title: string): string {
  const kinds = Object.keys(table);
  const splits = Object.keys(SPLIT_COLOURS);
  const max = Math.max(1, ...kinds.map((k) => splits.reduce((n, s) => n + (table[k]?.[s] ?? 0), 0)));
  const left = 70;
  const width = 520;
  const barArea = width - left - 70;
  const rowHeight = 26;
  const top = 34;
  const height = top + kinds.length * rowHeight + 34;
  const rows = kinds.map((kind, r) => {
    let x = left;
    const y = top + r * rowHeight;
    const total = splits.reduce((n, s) => n + (table[kind]?.[s] ?? 0), 0);
    const segments = splits.map((split) => {
      const n = table[kind]?.[split] ?? 0;
      const w = (n / max) * barArea;
      const rect =
        n > 0
          ? `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowHeight - 8}" fill="${SPLIT_COLOURS[split]}"><title>${escapeXml(`${kind} / ${split}: ${n}`)}</title></rect>`
          : "";
      x += w;
      return rect;
    });
    return [
      `<text x="${left - 8}" y="${y + rowHeight / 2}" text-anchor="end" dominant-baseline="middle">${escapeXml(kind)}</text>`,
      ...segments,
      `<text x="${(x + 6).toFixed(1)}" y="${y + rowHeight / 2}" dominant-baseline="middle">${total}</text>`,
    ].join("");
  });
  const legendY = top + kinds.length * rowHeight + 14;
  const legend = splits.map((split, k) => {
    const x = left + k * 110;
    return `<rect x="${x}" y="${legendY - 9}" width="12" height="12" fill="${SPLIT_COLOURS[split]}"/><text x="${x + 18}" y="${legendY}" dominant-baseline="middle">${split}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="18" font-weight="bold">${escapeXml(title)}</text>`,
    ...rows,
    ...legend,
    "</svg>",
    "",
  ].join("\n");
}
