// The look of the live widgets (live.js adds it to the page once, with the first widget).
export const LIVE_CSS = `
.illustrated-live-widget { border: 1px solid #ccc; border-radius: 6px; padding: 0.8em 1em;
  margin: 1em 0; font-size: 0.9rem; }
.illustrated-live-widget .il-row { display: flex; flex-wrap: wrap; gap: 0.6em 1.2em;
  align-items: center; margin: 0.4em 0; }
.illustrated-live-widget label { display: inline-flex; gap: 0.4em; align-items: center; }
.illustrated-live-widget input[type=text] { width: 24em; padding: 0.2em 0.4em; }
.illustrated-live-widget select { padding: 0.1em 0.3em; }
.il-suggestions { display: flex; flex-wrap: wrap; gap: 0.3em; min-height: 1.6em; }
.il-suggestions button { border: 1px solid #bbb; border-radius: 3px; background: #f5f5f5;
  padding: 0 0.4em; cursor: pointer; font-size: 0.85em; }
.il-unknown { color: #b00020; font-weight: 600; }
.il-status { color: #555; min-height: 1.3em; }
.il-status.il-error { color: #b00020; }
.il-tokens span { display: inline-block; border: 1px solid #8e7cc3; background: #efe9fb;
  border-radius: 3px; padding: 0 0.35em; margin: 0.1em; font-family: monospace; }
.il-heatmap { border-collapse: collapse; margin: 0.4em 0; }
.il-heatmap td, .il-heatmap th { padding: 0.25em 0.45em; text-align: center; font-weight: normal;
  font-family: monospace; }
.il-heatmap caption, .il-hyps caption { caption-side: top; text-align: left; color: #444; }
.il-heatmap td { min-width: 3.2em; border: 1px solid #fff; }
.il-heatmap th.il-out { text-align: right; }
.il-dists { display: flex; flex-wrap: wrap; gap: 0.6em 1.2em; }
.il-dist { min-width: 12em; }
.il-dist h5 { margin: 0.2em 0; font-size: 0.9em; }
.il-bar { display: grid; grid-template-columns: 5.5em 1fr 3.6em; gap: 0.3em; align-items: center;
  font-family: monospace; font-size: 0.85em; }
.il-bar > div { background: #c9c0e6; height: 0.9em; }
.il-bar.il-chosen > div { background: #c0392b; }
.il-beam-scroll { overflow-x: auto; }
.il-hyps { border-collapse: collapse; margin: 0.4em 0; }
.il-hyps td, .il-hyps th { padding: 0.15em 0.6em; border-bottom: 1px solid #ddd; }
.il-tree text { font-family: monospace; font-size: 12px; }
`;
