import { inputGuards } from '../../core/rules/schemas.js';
import type { CoreSettings } from '../../core/settings.js';
import type { InputRules } from './port.js';

/** The input rules the bot checks before asking, from a service's settings (ours, or the spec's defaults for another). */
export function inputRulesOf(settings: CoreSettings, schemas: InputRules['schemas'] = inputGuards(settings).schemas): InputRules {
  return {
    schemas,
    topupMin: settings.topupMin,
    topupMax: settings.topupMax,
    withdrawMin: settings.withdrawMin,
    withdrawMax: settings.withdrawMax,
    withdrawCooldownSeconds: settings.withdrawCooldownSeconds,
  };
}
