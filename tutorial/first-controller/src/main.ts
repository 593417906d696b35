import { KubeConfig } from '@kubernetes/client-node';
import { startInfoController } from './controller.js';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const running = await startInfoController(kubeConfig, { namespace: process.argv[2] ?? 'default', identity: process.env.POD_NAME ?? 'local' });
console.log(`reconciling; metrics on ${running.metricsUrl}`);
process.once('SIGINT', () => void running.stop());
