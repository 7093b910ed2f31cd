// One uPlot chart of per-turn series. Labels are goald's own words; no goal text reaches uPlot.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  bars?: boolean;
  dash?: boolean;
}

const WIDTH = 460;
const HEIGHT = 180;

export function Chart(props: { title: string; turns: number[]; series: ChartSeries[]; testId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [props.turns, ...props.series.map((series) => series.values)];
  const shape = props.series.map((series) => `${series.label}:${series.bars === true}`).join('|');

  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const bars = uPlot.paths.bars?.({ size: [0.6, 40] });
    const options: uPlot.Options = {
      width: WIDTH,
      height: HEIGHT,
      scales: { x: { time: false } },
      axes: [{ label: 'turn' }, { size: 64 }],
      series: [
        { label: 'turn' },
        ...props.series.map((series) => ({
          label: series.label,
          stroke: series.color,
          fill: series.bars === true ? `${series.color}55` : undefined,
          dash: series.dash === true ? [6, 4] : undefined,
          paths: series.bars === true ? bars : undefined,
          spanGaps: true,
        })),
      ],
    };
    plot.current = new uPlot(options, data, element);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // The chart is rebuilt only when its series change shape; new points go through setData below.
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data);
  });

  return (
    <figure class="chart" data-testid={props.testId} data-points={props.turns.length}>
      <figcaption>{props.title}</figcaption>
      <div ref={box} />
    </figure>
  );
}
