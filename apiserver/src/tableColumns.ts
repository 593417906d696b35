import type { KubeObject } from 'rx-informer';

/**
 * The parts of a `meta.k8s.io` Table the printers make: column definitions and one row's cells.
 * Column descriptions of the Name and Age columns are the API's documentation of those fields, as
 * the API server sends them; for other field columns the API server sends the field's whole API
 * documentation, and these carry its first sentence.
 */

/** `metav1.TableColumnDefinition`. */
export interface TableColumn {
  readonly name: string;
  /** An OpenAPI type: `string`, `integer`, `number`, `boolean` or `date`. */
  readonly type: string;
  /** `name` for the column that holds the object's name, else empty. */
  readonly format: string;
  readonly description: string;
  /** 0 for the default columns; 1 for those `kubectl get -o wide` adds. */
  readonly priority: number;
}

/** A cell value as it travels in JSON. */
export type TableCell = string | number | boolean | null;

/** `metav1.TableRowCondition` (pods that completed carry `Completed`). */
export interface TableRowCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

/** One row, before its object is attached. */
export interface TableRowData {
  readonly cells: readonly TableCell[];
  readonly conditions?: readonly TableRowCondition[];
}

/** What the API server's table convertor for one kind knows: its columns, and how to fill a row at a given time. */
export interface TablePrinter {
  readonly columns: readonly TableColumn[];
  row(object: KubeObject, now: number): TableRowData;
}

/** A column definition; `priority` 1 for the `-o wide` ones. */
export function column(name: string, type: string, description: string, priority = 0): TableColumn {
  return { name, type, format: '', description, priority };
}

/** `metav1.ObjectMeta{}.SwaggerDoc()["name"]`. */
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. ' +
  'Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`. */
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. ' +
  'Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. ' +
  'More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** The first column of every printer: the object's name. */
export const NAME_COLUMN: TableColumn = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };

/** The built-in printers' Age column: a duration the server computes (`translateTimestampSince`). */
export const AGE_COLUMN: TableColumn = column('Age', 'string', CREATION_TIMESTAMP_DESCRIPTION);
