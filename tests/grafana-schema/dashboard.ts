// A classic (schemaVersion 39) dashboard as its JSON file spells it, typed by @grafana/schema's
// Dashboard: the TypeScript types Grafana generates from its CUE dashboard kind, the only form of
// the schema the npm package ships (no JSON schema, no CUE files). Two adjustments, both about
// spelling rather than shape:
// - a string enum is its values: the file says "absolute", TypeScript's enum ThresholdsMode
//   accepts only ThresholdsMode.Absolute;
// - the Prometheus data source's own fields of an annotation (expr, step, titleFormat, ...) and a
//   query variable's `definition`, which Grafana itself writes but the generated interfaces,
//   closed in TypeScript, do not list. Only these names, with their types, are added.
// Everything else is checked as declared: unknown keys, missing required keys, wrong types.
import type { AnnotationQuery, Dashboard, VariableModel } from '@grafana/schema';

type PrometheusAnnotation = {
  expr?: string;
  step?: string;
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
};
type QueryVariable = { definition?: string };

type Wire<T> = T extends AnnotationQuery
  ? WireObject<T> & PrometheusAnnotation
  : T extends VariableModel
    ? WireObject<T> & QueryVariable
    : T extends string
      ? `${T}`
      : T extends Array<infer U>
        ? Array<Wire<U>>
        : T extends object
          ? WireObject<T>
          : T;
type WireObject<T> = { [K in keyof T]: Wire<T[K]> };

export type DashboardJson = Wire<Dashboard>;
