import { changedAnnotations } from '../../lib/operators/changedAnnotations';
import { describeStringMapOperator } from './stringMapOperatorSpecs';

describeStringMapOperator('changedAnnotations', changedAnnotations, 'annotations');
