import { changedLabels } from '../../lib/operators/changedLabels';
import { describeStringMapOperator } from './stringMapOperatorSpecs';

describeStringMapOperator('changedLabels', changedLabels, 'labels');
