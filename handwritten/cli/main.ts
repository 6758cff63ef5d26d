// Runs the oclif command framework for everything bin/tau.cjs did not answer itself.
import { execute } from "@oclif/core";

export async function main(binUrl: string): Promise<void> {
  await execute({ dir: binUrl, development: false });
}
