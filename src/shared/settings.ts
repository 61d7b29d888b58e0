import { z } from 'zod';

/** One environment row of the new-run form. */
const EnvRowSchema = z.object({ name: z.string(), value: z.string() });
/** One server sweep row of the new-run form. */
const VaryRowSchema = z.object({ key: z.string(), values: z.string() });

/** The new-run form as last left: its fields as typed (strings), toggles, env and sweep rows. */
const FormValuesSchema = z.record(
  z.string(),
  z.union([z.string(), z.boolean(), z.array(EnvRowSchema), z.array(VaryRowSchema)]),
);
export type FormValues = z.infer<typeof FormValuesSchema>;

/** What the app keeps between starts. Secrets ride in `form` to and from the app, never in the file as text. */
export const AppSettingsSchema = z.object({
  form: FormValuesSchema.optional(),
  /** Parent folder of run folders; the desktop app uses it from its next start. */
  runsDir: z
    .string()
    .regex(/^(\/|[A-Za-z]:[\\/]|\\\\)/, 'the runs folder must be a full path such as /data/servebench/runs')
    .optional(),
});
export type AppSettings = z.infer<typeof AppSettingsSchema>;

/** The settings as the app gets them, with where secrets are kept (so the app can say so). */
export interface SettingsAnswer {
  settings: AppSettings;
  /** 'encrypted': the OS keychain (Electron's safeStorage); 'memory': until this process ends, never on disk. */
  secrets: 'encrypted' | 'memory';
  /** The folder runs go to now. */
  runsDir?: string;
}
