// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/unwind_user/methods: how the deferred user stack walk finds
 * callers, so that a profiler can tell before it records whether the
 * chains of code built without frame pointers will be right; and the
 * switch that turns a method off (and on again) without a reboot;
 * work_budget: how much table work one walk may do; interrupt_budget: how
 * much of it a walk where page faults cannot be taken may do before it
 * defers; and bpf_tables: whether BPF's stack helpers walk by the tables
 * too.
 */
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/unwind_user.h>

static const struct {
	const char	*name;
	unsigned int	type;
} unwind_user_method_names[] = {
	{ "fp",		UNWIND_USER_TYPE_FP },
	{ "sframe",	UNWIND_USER_TYPE_SFRAME },
	{ "eh_frame",	UNWIND_USER_TYPE_EH_FRAME },
};

/* The names of the methods in @methods, space-separated, and a newline. */
static ssize_t unwind_user_methods_emit(char *buf, unsigned int methods)
{
	ssize_t len = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(unwind_user_method_names); i++) {
		if (!(methods & unwind_user_method_names[i].type))
			continue;
		len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "",
				     unwind_user_method_names[i].name);
	}
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/* The methods turned on: a frame pointer walk, and the tables in use. */
static ssize_t methods_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return unwind_user_methods_emit(buf, unwind_user_methods() |
					     UNWIND_USER_TYPE_FP);
}

/* A space-separated list of the methods to use, "fp" among them. */
static ssize_t methods_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	char list[64], *p = list, *word;
	unsigned int methods = 0, i;
	int ret;

	if (count >= sizeof(list))
		return -EINVAL;
	memcpy(list, buf, count);
	list[count] = '\0';
	while ((word = strsep(&p, " \t\n"))) {
		if (!*word)
			continue;
		for (i = 0; i < ARRAY_SIZE(unwind_user_method_names); i++)
			if (!strcmp(word, unwind_user_method_names[i].name))
				break;
		if (i == ARRAY_SIZE(unwind_user_method_names))
			return -EINVAL;
		methods |= unwind_user_method_names[i].type;
	}
	/* Without frame pointers built in, "fp" names no method. */
	if (!(unwind_user_methods_built() & UNWIND_USER_TYPE_FP))
		methods &= ~UNWIND_USER_TYPE_FP;
	ret = unwind_user_set_methods(methods);
	return ret ? ret : count;
}

static struct kobj_attribute methods_attr = __ATTR_RW(methods);

/* The methods this kernel was built with, whatever is turned off. */
static ssize_t available_methods_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return unwind_user_methods_emit(buf, unwind_user_methods_built() |
					     UNWIND_USER_TYPE_FP);
}

static struct kobj_attribute available_methods_attr =
	__ATTR_RO(available_methods);

/* Parse a budget written to a knob and set it with @set. */
static ssize_t budget_store(const char *buf, size_t count,
			    int (*set)(unsigned int budget))
{
	unsigned int budget;
	int ret = kstrtouint(buf, 0, &budget);

	if (!ret)
		ret = set(budget);
	return ret ? ret : count;
}

/* The table work one walk may do: rows, instructions and reads. */
static ssize_t work_budget_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", unwind_user_work_budget());
}

static ssize_t work_budget_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	return budget_store(buf, count, unwind_user_set_work_budget);
}

static struct kobj_attribute work_budget_attr = __ATTR_RW(work_budget);

/* The table work a walk in an interrupt may do before it defers. */
static ssize_t interrupt_budget_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", unwind_user_interrupt_budget());
}

static ssize_t interrupt_budget_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	return budget_store(buf, count, unwind_user_set_interrupt_budget);
}

static struct kobj_attribute interrupt_budget_attr =
	__ATTR_RW(interrupt_budget);

#ifdef CONFIG_UNWIND_USER_BPF
/* Whether BPF's stack helpers walk by the tables: 1, or 0 (frame pointers). */
static ssize_t bpf_tables_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", unwind_user_bpf_enabled());
}

static ssize_t bpf_tables_store(struct kobject *kobj,
				struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	bool on;
	int ret = kstrtobool(buf, &on);

	if (ret)
		return ret;
	unwind_user_bpf_set(on);
	return count;
}

static struct kobj_attribute bpf_tables_attr = __ATTR_RW(bpf_tables);
#endif

static struct attribute *unwind_user_attrs[] = {
	&methods_attr.attr,
	&available_methods_attr.attr,
	&work_budget_attr.attr,
	&interrupt_budget_attr.attr,
#ifdef CONFIG_UNWIND_USER_BPF
	&bpf_tables_attr.attr,
#endif
	NULL
};

static const struct attribute_group unwind_user_group = {
	.attrs = unwind_user_attrs,
};

static int __init unwind_user_sysfs_init(void)
{
	struct kobject *kobj = kobject_create_and_add("unwind_user", kernel_kobj);
	int ret;

	if (!kobj)
		return -ENOMEM;
	ret = sysfs_create_group(kobj, &unwind_user_group);
	if (ret)
		kobject_put(kobj);
	return ret;
}
late_initcall(unwind_user_sysfs_init);
