export type SimulationOptions = Readonly<{
  url: string;
  secret: string;
  buyers: number;
  stock: number;
  perUserLimit: number;
  clicks: number;
  connections: number;
  json?: boolean;
}>;

export type SimulationReport = Readonly<{ oversold: number }>;

export const runSimulation = (_options: SimulationOptions): Promise<SimulationReport> => {
  throw new Error('not written yet');
};
