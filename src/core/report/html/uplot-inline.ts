import uplotCss from 'uplot/dist/uPlot.min.css?raw';
import uplotJs from 'uplot/dist/uPlot.iife.min.js?raw';
import drawJs from './timeline-draw.js?raw';

/** Text that can sit inside its element: a closing tag inside it would end the element early. */
function inert(text: string, tag: 'script' | 'style'): string {
  if (new RegExp(`</${tag}`, 'i').test(text)) throw new Error(`an inlined ${tag} holds </${tag}`);
  return text;
}

/** uPlot's stylesheet, inlined from node_modules/uplot/dist when servebench is built (the report fetches nothing). */
export const UPLOT_CSS = inert(uplotCss, 'style');

/** The scripts the report's timeline runs, in order: uPlot itself, then the drawing of the spec. */
export const TIMELINE_SCRIPTS: readonly string[] = [inert(uplotJs, 'script'), inert(drawJs, 'script')];
