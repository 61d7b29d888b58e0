import type { SecretCipher } from '../core/settings/settings-store.js';

/** The part of Electron's safeStorage the settings need (tests pass a fake). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(sealed: Buffer): string;
  getSelectedStorageBackend?(): string;
}

/**
 * A cipher over safeStorage, or undefined (secrets then stay in memory) when the OS offers no keychain:
 * on Linux without a secret service Electron falls back to 'basic_text', a fixed key, which is plain text in effect.
 */
export function safeStorageCipher(storage: SafeStorageLike, platform: NodeJS.Platform): SecretCipher | undefined {
  if (!storage.isEncryptionAvailable()) return undefined;
  if (platform === 'linux' && storage.getSelectedStorageBackend?.() === 'basic_text') return undefined;
  return {
    encrypt: (plain) => storage.encryptString(plain).toString('base64'),
    decrypt: (sealed) => storage.decryptString(Buffer.from(sealed, 'base64')),
  };
}
