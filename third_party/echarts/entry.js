/* The parts of Apache ECharts that snr's report pages use (analyzer/report.js,
 * analyzer/report_windows.c), bundled by build.sh as the global `echarts` the
 * full distribution defines (init, getInstanceByDom, graphic, color, ...). */
import * as echarts from 'echarts/core';
import { BarChart, CustomChart, HeatmapChart, LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';

echarts.use([LineChart, BarChart, CustomChart, HeatmapChart, GridComponent, TooltipComponent, LegendComponent,
  DataZoomComponent, VisualMapComponent, CanvasRenderer, SVGRenderer]);
window.echarts = echarts;
