/*
 * Naming GPU models: one resolver for every place a user names a model (a job's gpu_models, a
 * tenant's per-model quota, the price table, scheduler.model_cost), so that a short name and
 * the name NVML reports mean the same everywhere.
 *
 * A node reports each GPU's model as NVML names it: "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB
 * HBM3", "Tesla T4", "Tesla V100-SXM2-32GB". A user may write that name (case does not matter),
 * or a short name: the model's family, optionally with its memory and other words of the full
 * name, in any order after the family: "A100", "A100-80GB", "A100-SXM4", "H100", "H100-80GB",
 * "T4", "V100", "V100-32GB".
 *
 * Matching. Both names are cut into words at spaces, '-', '_' and '/', compared without case;
 * the brand words NVIDIA, Tesla, GeForce, Quadro, RTX and GTX are dropped. A short name names a
 * model when
 *   - its first word is the model's first word (the family: "A100" names "NVIDIA A100-SXM4-80GB"
 *     but "A10" does not, and "SXM4" names nothing),
 *   - each other word is one of the model's words, and
 *   - each memory word ("80GB", "80G") is the model's memory word; a model whose name has none
 *     ("NVIDIA H100 PCIe", "Tesla T4") is matched by its memory instead: within 10% of the size
 *     (T4's 15360 MiB is "16GB"). A model whose name and memory say nothing does not match.
 *
 * So a short name may name a set of models: "V100" names the 16 and 32 GB variants of every
 * form factor, "H100" the SXM, PCIe and NVL models. Where several names given for one purpose
 * match one model (a price for "A100" and one for "A100-80GB"), the most specific wins: the
 * exact name, then the short name with the most words (gp_model_name_match's rank).
 *
 * Pure: no I/O, no globals.
 */
#ifndef GPUPOOL_MODELNAME_H
#define GPUPOOL_MODELNAME_H

#include "gpupool/model.h"

#include <stdint.h>

/* The rank of an exact (case-insensitive) match; a short name ranks 1 + its words after the
 * family ("A100" 1, "A100-80GB" 2), always below it. */
#define GP_MODEL_MATCH_EXACT 1000

/* How specifically name names the GPU model called model, with mem_mib of memory per GPU (0:
 * unknown): 0 when it does not name it; GP_MODEL_MATCH_EXACT for the same name; else the short
 * name's rank (1 and up). NULL or empty names name nothing. */
int gp_model_name_match(const char *name, const char *model, int64_t mem_mib);

/* The models of c's model table that name names: bit m for model m; 0 when none. */
uint64_t gp_cluster_models_named(const gp_cluster *c, const char *name);

#endif
