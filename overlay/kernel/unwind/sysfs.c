// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/unwind_user/methods: how the deferred user stack walk finds
 * callers, so that a profiler can tell before it records whether the
 * chains of code built without frame pointers will be right.
 */
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

/*
 * The deferred walk uses frame pointers everywhere and, with
 * CONFIG_UNWIND_USER_SFRAME, the SFrame table of each file that has one.
 */
static ssize_t methods_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "fp%s\n",
			  IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) ? " sframe" : "");
}

static struct kobj_attribute methods_attr = __ATTR_RO(methods);

static struct attribute *unwind_user_attrs[] = {
	&methods_attr.attr,
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
