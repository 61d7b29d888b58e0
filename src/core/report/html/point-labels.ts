/** A point's label to place: anchored at the point, placed in priority order (lower first). */
export interface LabelRequest {
  x: number;
  y: number;
  text: string;
  priority: number;
  /** Distance from the point (a ringed point needs more room). */
  gap: number;
  /** Labels that may sit further out with a leader line (the capacity's must show). */
  far?: boolean;
}

/** A placed label: its text origin and anchor, and a leader line from its point when it sits further out. */
export interface PlacedLabel {
  x: number;
  y: number;
  anchor: 'start' | 'end';
  text: string;
  request: LabelRequest;
  leader?: { x1: number; y1: number; x2: number; y2: number };
}

/** A rectangle in SVG units. */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const CHAR_W = 6.2;
const LINE_H = 11;

const overlaps = (a: Box, b: Box): boolean => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

/** Where a label's text box is for a text origin and anchor. */
function textBox(x: number, y: number, w: number, anchor: 'start' | 'end'): Box {
  return { x0: anchor === 'start' ? x : x - w, x1: anchor === 'start' ? x + w : x, y0: y - LINE_H + 2, y1: y + 2 };
}

/**
 * Places labels beside their points (right-above, left-above, right-below, left-below; far ones further out with a
 * leader line), by priority; a label that fits nowhere without covering a marker or another label, or leaving the
 * bounds, is left out (its point keeps its hover title), so crowded points never print over each other.
 */
export function placeLabels(
  requests: readonly LabelRequest[],
  bounds: Box,
  markers: readonly Box[] = [],
): PlacedLabel[] {
  const placed: PlacedLabel[] = [];
  const boxes: Box[] = [...markers];
  const order = [...requests].sort((a, b) => a.priority - b.priority);
  for (const r of order) {
    const w = r.text.length * CHAR_W;
    const steps = r.far ? [0, 16, 32, 48] : [0];
    let done = false;
    for (const extra of steps) {
      const d = r.gap + extra;
      const tries: Array<{ dx: number; dy: number; anchor: 'start' | 'end' }> = [
        { dx: d, dy: -d, anchor: 'start' },
        { dx: -d, dy: -d, anchor: 'end' },
        { dx: d, dy: d + LINE_H - 2, anchor: 'start' },
        { dx: -d, dy: d + LINE_H - 2, anchor: 'end' },
      ];
      for (const t of tries) {
        const x = r.x + t.dx;
        const y = r.y + t.dy;
        const box = textBox(x, y, w, t.anchor);
        const inside = box.x0 >= bounds.x0 && box.x1 <= bounds.x1 && box.y0 >= bounds.y0 && box.y1 <= bounds.y1;
        if (!inside || boxes.some((b) => overlaps(b, box))) continue;
        boxes.push(box);
        const leader =
          extra > 0
            ? {
                x1: r.x + Math.sign(t.dx) * r.gap * 0.7,
                y1: r.y + Math.sign(t.dy) * r.gap * 0.7,
                x2: x,
                y2: t.dy < 0 ? y + 2 : y - LINE_H + 2,
              }
            : undefined;
        placed.push({ x, y, anchor: t.anchor, text: r.text, request: r, ...(leader ? { leader } : {}) });
        done = true;
        break;
      }
      if (done) break;
    }
  }
  return placed;
}
