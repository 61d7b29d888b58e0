import os from 'node:os';
import si from 'systeminformation';

/** Host facts, read once per run (systeminformation is too heavy for sampling). */
export interface HostInfo {
  hostname: string;
  cpu: string | null;
  cores: number;
  physicalCores: number | null;
  memoryGiB: number | null;
  os: string;
}

/** The parts of systeminformation used here; tests pass a fake. */
export type SystemInfoLike = Pick<typeof si, 'cpu' | 'mem' | 'osInfo'>;

/** Reads CPU brand and cores, memory and OS distro/release; falls back to node:os for anything that fails. */
export async function readHostInfo(system: SystemInfoLike = si): Promise<HostInfo> {
  const [cpu, mem, osInfo] = await Promise.all([
    system.cpu().catch(() => null),
    system.mem().catch(() => null),
    system.osInfo().catch(() => null),
  ]);
  const brand = cpu ? [cpu.manufacturer, cpu.brand].filter(Boolean).join(' ').trim() : '';
  const osName = osInfo?.distro
    ? `${osInfo.distro}${osInfo.release ? ` ${osInfo.release}` : ''}`
    : `${os.type()} ${os.release()}`;
  return {
    hostname: os.hostname(),
    cpu: brand || os.cpus()[0]?.model || null,
    cores: cpu?.cores || os.cpus().length,
    physicalCores: cpu?.physicalCores || null,
    memoryGiB: mem?.total
      ? Math.round((mem.total / 1024 ** 3) * 10) / 10
      : Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: osName,
  };
}
