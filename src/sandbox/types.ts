// The sandbox's public contract: how a process is wrapped, how a turn ran, and what a turn sees.

/** How a turn's agent and checks ran: inside bubblewrap, unsandboxed by setting, or unsandboxed because bwrap does not work here. */
export type SandboxUse = 'bwrap' | 'off' | 'unavailable';

/** Run `executable ...args -- command ...commandArgs` instead of `command ...commandArgs`. */
export interface SandboxWrap {
  executable: string;
  args: readonly string[];
}

/** What a sandboxed process sees of the filesystem and the network; every path absolute and real. */
export interface SandboxView {
  /** Bound read-write (the workspace first). */
  writable: string[];
  /** Bound read-only over what is hidden or private (everything else is read-only anyway). */
  readable: string[];
  /** Replaced by an empty read-only directory or an empty file. */
  hidden: string[];
  /** Private, empty and writable (a fresh tmpfs per process). */
  private: string[];
  /** Whether the network is the host's (false: its own namespace, loopback only). */
  network: boolean;
  /** Configured or profile paths that do not exist here, so nothing is mounted for them. */
  absent: string[];
}
