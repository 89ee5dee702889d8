/** Host names as settings compare them; the check itself lives in shared/ (e-mail domains use it too). */
export { canonicalHostName, isDnsName } from '../shared/host-name.js';
